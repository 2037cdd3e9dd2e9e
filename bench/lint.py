"""Lint benchmark: prints one JSON line of numbers (never run as a test).

    python bench/lint.py                   # synthetic vault of 10,000 notes (bench/ingest.py's)
    python bench/lint.py --notes 1000

Builds the vault of ``bench/ingest.py`` (~30 facts and 3-5 single-valued ``owner::``
fields a note), then plants problems: notes linking names no note has (broken links, and
one name linked from many: a missing page), isolated notes, an alias another note
already has, contradicting asserted facts, and a wiki of ``--pages`` pages each citing
five facts, some of them since retracted or under the confidence floor. Reports the time
of a whole ``kw.lint()`` (median of ``--runs``), of each rule, and the findings by kind.
Structure only (no vectors): lint reads no vector.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import make_vault  # noqa: E402
from knotwork import Knotwork  # noqa: E402
from knotwork.wiki import lint as lint_mod  # noqa: E402


def _plant(vault: Path, notes: list[str], rng: random.Random) -> None:
    for i in range(50):
        (vault / f"planted/broken-{i}.md").parent.mkdir(parents=True, exist_ok=True)
        (vault / f"planted/broken-{i}.md").write_text(
            f"# Broken {i}\n\nSee [[No Such Note {i}]] and [[Ghost Service]]; back to"
            f" [[{Path(rng.choice(notes)).stem}]].\n")
    for i in range(20):
        (vault / f"planted/island-{i}.md").write_text(f"# Island {i}\n\nNothing links here.\n")
    (vault / "planted/dup.md").write_text(
        f"---\naliases: [{Path(notes[0]).stem}]\n---\n# Dup\n\nSee [[{Path(notes[1]).stem}]].\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(11)
    tmp = Path(tempfile.mkdtemp(prefix="kw-lint-"))
    try:
        vault = tmp / "vault"
        vault.mkdir()
        notes = make_vault(vault, args.notes)
        _plant(vault, notes, rng)
        with Knotwork.open(vault, db=str(tmp / "kw.db"), embedder="none",
                           actor="agent:bench") as kw:
            t = time.perf_counter()
            kw.ingest()
            ingest_s = time.perf_counter() - t
            for i in range(30):  # each note names its owners in its own text
                kw.assert_fact(Path(notes[i]).stem, "owner", "Someone Else")
            sample = [f for n in rng.sample(notes, args.pages * 5)
                      for f in kw.facts(Path(n).stem) if f.predicate == "priority"]
            weak = [kw.assert_fact(Path(n).stem, "rating", "3", confidence=0.4).id
                    for n in notes[:20]]
            ids = weak + [f.id for f in sample]
            t = time.perf_counter()
            for p in range(args.pages):
                cites = ids[p * 5:(p + 1) * 5] or ids[:5]
                kw.write_page("topic", f"Topic {p}", f"# Topic {p}\n\nAbout [[{Path(notes[p]).stem}"
                              "]].\n\n" + "".join(f"- claim kw:fact/{i}\n" for i in cites))
            write_ms = (time.perf_counter() - t) / args.pages * 1000
            edited = [n for n in rng.sample(notes, 100)]
            for n in edited:  # retract what some pages cite: the notes change
                path = vault / n
                path.write_text(path.read_text().replace("priority:", "priority: 9 #", 1))
            kw.ingest()
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                found = kw.lint()
                times.append(time.perf_counter() - t)
            rules = {}
            opts = lint_mod.LintOptions(scope="default", single_valued=(
                "status", "owner", "runs_on", "date", "role"))
            for kinds, rule in lint_mod._RULES:
                ctx = lint_mod._Ctx(kw.store.reader, kw.wiki(), opts, kw.wiki().generated)
                t = time.perf_counter()
                with kw.store.snapshot():
                    rule(ctx)
                rules["/".join(kinds)] = round(time.perf_counter() - t, 3)
            stats = kw.stats()
        print(json.dumps({
            "notes": args.notes, "pages": args.pages,
            "facts_live": stats.as_dict().get("facts"), "ingest_s": round(ingest_s, 1),
            "write_page_ms": round(write_ms, 1),
            "lint_s_median": round(statistics.median(times), 3),
            "lint_s_runs": [round(x, 3) for x in times], "rule_s": rules,
            "findings": dict(Counter(f.kind for f in found))}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
