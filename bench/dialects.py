"""Link resolution per note dialect: how many links reach the note their tool would open.

Each fixture vault under ``tests/fixtures/dialects/`` (one per tool, written from its
documented syntax) lists in ``expected.tsv`` one link per line: the note it stands in,
a piece of its text, and the vault path (no ``.md``) of the note it opens. A link is
right when a fact read from the link's text points at that note's entity (or, when the
note states that fact first elsewhere, the note has it). Also takes any folder with an
``expected.tsv``.

    python bench/dialects.py [DIR ...] [--dialect NAME]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "dialects"


def resolution(vault: Path, dialect: str = "auto") -> dict[str, object]:
    """``{"right", "total", "rate", "wrong"}`` for the vault's ``expected.tsv``."""
    from knotwork import Knotwork

    opts = {} if dialect == "auto" else {"dialect": dialect}  # (older code: no setting)
    with tempfile.TemporaryDirectory() as tmp, \
            Knotwork.open(vault, db=str(Path(tmp) / "store.db"), embedder="none",
                          **opts) as kw:
        kw.ingest()
        right, wrong = 0, []
        with open(vault / "expected.tsv", newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f, delimiter="\t"))
        for src, piece, target in rows:
            want = kw.entity(target).entity.iri
            every = [x for x in kw.facts(src.removesuffix(".md")) if x.value_type == "Entity"]
            # equal facts are stored once, citing the first line that states them: a link
            # found again later in the note has no fact of its own, and is right when
            # the note links the target
            facts = [x for x in every if piece in (x.source.supporting_text if x.source else "")]
            if any(x.value == want for x in facts or every):
                right += 1
            else:
                wrong.append({"note": src, "link": piece,
                              "got": sorted({str(x.value_label) for x in facts})})
    return {"right": right, "total": len(rows), "rate": round(right / len(rows), 3),
            "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--dialect", default="auto")
    args = ap.parse_args(argv)
    dirs = args.dirs or sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    out = {d.name: resolution(d, args.dialect) for d in dirs}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
