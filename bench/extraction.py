"""What structural extraction finds in a folder of Markdown: facts by extractor and
predicate, and how many notes say anything beyond their links.

Parses every ``*.md`` file under the folder (no store, no mentions, which need the whole
vault's names) and prints one JSON line. Real corpora to try are under
``../shared/datasets/`` (ADRs, Rust RFCs, KEPs, a Foam vault)::

    python bench/extraction.py ../shared/datasets/adrs
    python bench/extraction.py ../shared/datasets/rust_rfcs --top 8
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from knotwork.ingest import parse_markdown
from knotwork.types import ParsedDocument

LINKS = frozenset({"wikilink", "mdlink"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--top", type=int, default=12, help="predicates to list (default 12)")
    args = ap.parse_args()
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
    facts = sum(by_extractor.values())
    print(json.dumps({
        "folder": str(args.folder), "notes": notes, "errors": errors, "facts": facts,
        "facts_per_note": round(facts / max(notes, 1), 2),
        "notes_with_facts_beyond_links": beyond_links,
        "by_extractor": dict(by_extractor.most_common()),
        "top_predicates": dict(by_predicate.most_common(args.top)),
        "parse_s": round(time.perf_counter() - start, 2),
    }, ensure_ascii=False))


if __name__ == "__main__":
    main()
