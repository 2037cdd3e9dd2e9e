"""Turn source files into ``ParsedDocument`` values: names, chunks and fact drafts.

Only ``knotwork.types`` and ``knotwork.errors`` are imported from the package, so
parsing can run in worker processes without a store.
"""

import hashlib
import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .markdown import parse_markdown

__all__ = ["EXTRACTION_RULES", "MENTION_RULES", "extraction_key", "parse_markdown"]

# The version of what parsing makes of a file: raise it with every change that makes the
# same bytes give other names, chunks or facts (``tests/ingest/test_rules.py`` fails until
# it is raised). A sync reads again every note extracted under other rules, so a store
# never keeps facts the current code would not find, and no one has to rebuild it.
EXTRACTION_RULES = 19

# The version of how plain-text mentions are found (``mentions.MentionFinder``, the
# labels ``types.mention_labels`` keeps): raise it with every change to what the same
# notes and names give (``tests/ingest/test_rules.py`` fails until it is raised). A sync
# then finds every note's mentions again.
MENTION_RULES = 5  # 5: each scope's notes mention its own scope's notes only


def extraction_key(chunk_tokens: int) -> str:
    """What a document's facts and chunks were extracted under: the rules, the chunk size,
    the vault's dialect when it reads otherwise than Markdown (``dialects.key_suffix``)
    and, in a process that taught the lexicon more phrases, those phrases.

    This is the key of a note the generic note parser read; a document another parser
    read carries it with that parser's type and version appended
    (``parsers.ParserRegistry.key``), so the notes of every store made before parsers
    were chosen keep their key and are not read again.

    Why the lexicon is looked for in ``sys.modules``: a process that registered phrases
    has imported it, and a query process must not pay the parser's import to ask. Found
    there, it is imported all the same: another thread (a server's catch-up) may be in the
    middle of importing it, and the import waits until it is whole (asked half-imported,
    ``stats`` failed with an AttributeError during a first sync).
    """
    from .dialects import key_suffix

    key = f"{EXTRACTION_RULES}/{chunk_tokens}{key_suffix()}"
    name = f"{__name__}.lexicon"
    taught = importlib.import_module(name).registered() if name in sys.modules else ()
    if taught:
        key += "/" + hashlib.sha256(repr(taught).encode()).hexdigest()[:12]
    return key


def __getattr__(name: str) -> Any:
    # Why lazily: the parser's modules take ~0.15 s to import, and a process that only
    # queries (every CLI ``context`` or ``search``) reaches this package for a constant.
    if name == "parse_markdown":
        from .markdown import parse_markdown

        return parse_markdown
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
