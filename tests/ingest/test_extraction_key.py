"""``extraction_key`` asked while another thread imports the lexicon waits for it.

A server's catch-up imports the parser (and so the lexicon) in a thread of its own while
the server answers ``stats``, which asks for the extraction key: it met the lexicon
module half-imported and failed with an AttributeError. Run in a fresh interpreter whose
import of the lexicon is slowed down, so the other thread is sure to meet it half-done.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from knotwork.ingest import EXTRACTION_RULES

SCRIPT = textwrap.dedent('''
    import importlib.machinery, sys, threading, time

    NAME = "knotwork.ingest.lexicon"

    class SlowLoader(importlib.machinery.SourceFileLoader):
        def exec_module(self, module):
            started.set()
            time.sleep(0.5)  # in sys.modules, not yet whole
            super().exec_module(module)

    class SlowFinder:
        @staticmethod
        def find_spec(name, path, target=None):
            if name != NAME:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            spec.loader = SlowLoader(name, spec.origin)
            return spec

    started = threading.Event()
    sys.meta_path.insert(0, SlowFinder)
    from knotwork.ingest import extraction_key

    importer = threading.Thread(target=lambda: __import__(NAME))
    importer.start()
    started.wait()
    time.sleep(0.1)
    assert NAME in sys.modules and not hasattr(sys.modules[NAME], "registered")
    print(extraction_key(220))
    importer.join()
''')


def test_the_key_asked_during_the_lexicons_import_in_another_thread_waits_for_it() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{EXTRACTION_RULES}/220"  # no phrases taught
