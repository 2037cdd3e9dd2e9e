"""What structural extraction finds in a folder of Markdown: facts by extractor and
predicate, and how many notes say anything beyond their links.

Parses every ``*.md`` file under the folder (no store, no mentions, which need the whole
vault's names) and prints one JSON line. Real corpora to try are under
``../shared/datasets/`` (ADRs, Rust RFCs, KEPs, a Foam vault)::

    python bench/extraction.py ../shared/datasets/adrs
    python bench/extraction.py ../shared/datasets/rust_rfcs --top 8 --show header_field

``--show EXTRACTOR`` also prints a sample of that extractor's facts, one JSON line each
(file, line, subject, predicate, value, supporting text), to judge them by eye.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

from knotwork.ingest import parse_markdown
from knotwork.types import LiteralValue, ParsedDocument, SelfRef

LINKS = frozenset({"wikilink", "mdlink"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--top", type=int, default=12, help="predicates to list (default 12)")
    ap.add_argument("--show", metavar="EXTRACTOR", help="print a sample of its facts")
    ap.add_argument("--sample", type=int, default=20, help="how many to --show (default 20)")
    args = ap.parse_args()
    shown: list[dict[str, object]] = []
    by_extractor: Counter[str] = Counter()
    by_predicate: Counter[str] = Counter()
    notes = errors = beyond_links = 0
    start = time.perf_counter()
    for path in sorted(args.folder.rglob("*.md")):
        doc = parse_markdown(path.relative_to(args.folder).as_posix(), path.read_bytes())
        if not isinstance(doc, ParsedDocument):
            errors += 1
            continue
        notes += 1
        by_extractor.update(f.extractor for f in doc.facts)
        by_predicate.update(f.predicate for f in doc.facts)
        beyond_links += any(f.extractor not in LINKS for f in doc.facts)
        shown.extend({"file": doc.path, "line": f.span.line_start, "subject": _ref(f.subject),
                      "predicate": f.predicate, "value": _ref(f.object),
                      "text": f.supporting_text[:160]}
                     for f in doc.facts if f.extractor == args.show)
    facts = sum(by_extractor.values())
    print(json.dumps({
        "folder": str(args.folder), "notes": notes, "errors": errors, "facts": facts,
        "facts_per_note": round(facts / max(notes, 1), 2),
        "notes_with_facts_beyond_links": beyond_links,
        "by_extractor": dict(by_extractor.most_common()),
        "top_predicates": dict(by_predicate.most_common(args.top)),
        "parse_s": round(time.perf_counter() - start, 2),
    }, ensure_ascii=False))
    for fact in random.Random(7).sample(shown, min(args.sample, len(shown))):
        print(json.dumps(fact, ensure_ascii=False))


def _ref(ref: object) -> str:
    """A fact's subject or object as text: the note, a name's key, a literal's value."""
    if isinstance(ref, SelfRef):
        return "(this note)"
    return ref.value if isinstance(ref, LiteralValue) else ref.key  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
