"""Two processes writing one wiki at once lose no log line and no index line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from knotwork import Knotwork


def test_two_processes_appending_to_the_log_lose_no_line(tmp_path: Path) -> None:
    log = tmp_path / "wiki" / "log.md"
    code = ("import sys\nfrom pathlib import Path\nfrom knotwork.wiki.files import append_log\n"
            "for i in range(300):\n"
            f"    append_log(Path({str(log)!r}), at='t', actor=sys.argv[1], action='update',"
            " path=f'wiki/topic/{i}.md', title='x' * 500)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, name]) for name in ("p1", "p2")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    from knotwork.wiki.files import read_log

    entries = read_log(log)
    assert len(entries) == 600
    for name in ("p1", "p2"):
        assert sorted(int(Path(e.path).stem) for e in entries if e.actor == name) == list(
            range(300))
    assert log.read_text().count("# Wiki log") == 1


def test_two_processes_writing_pages_keep_every_index_line(vault: Path, tmp_path: Path
                                                           ) -> None:
    db = str(tmp_path / "kw.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
    code = ("import sys\nfrom knotwork import Knotwork\n"
            f"kw = Knotwork.open({str(vault)!r}, db={db!r}, embedder='none')\n"
            "for i in range(15):\n"
            "    kw.write_page('topic', f'{sys.argv[1]} page {i}', 'About [[Alpha]].')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, name]) for name in ("one", "two")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        index = (vault / "wiki/index.md").read_text()
        assert index.count("- [[wiki/topic/") == 30 and len(kw.get_log(None)) == 30
        assert len(kw.list_pages("topic")) == 30
        assert kw.ingest().added == 2  # only index.md and log.md were left to read
