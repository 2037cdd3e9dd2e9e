"""``add-context`` over the shared real corpora: files/s, records, facts, and how many
of the fields each file states were extracted.

Copies nothing: each corpus is read where it is into a fresh store in a temporary folder
(``Knotwork.add_context``, embedding off), timed, then its facts are counted from the
store. Coverage is of the files that state a field (a crude pattern over the text says
which do), as the tests assert it (``tests/ingest/test_typed_parsers.py``)::

    python bench/add_context.py                      # adrs, k8s_keps, rust_rfcs
    python bench/add_context.py --data ../shared/datasets --only adrs
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path

from knotwork import Knotwork

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "datasets"

# corpus -> (folder under the data set, namespace, {field: (predicate, pattern in the
# text of a file that states it, which files: "md" or "yaml")})
CORPORA: dict[str, tuple[str, dict[str, tuple[str, str, str]]]] = {
    "adrs": ("adrs", {
        "status": ("status", r"(?im)^(?:status:[ \t]*\S|#+[ \t]*status\b|\**status\**:)", "md"),
        "date": ("date", r"(?im)^(?:date:[ \t]*\S|\**date\**:[ \t]*\S)", "md"),
        "number": ("number", r"(?s).", "md"),
        "chosen_option": ("chosen_option", r"(?i)chosen option", "md"),
    }),
    "k8s_keps": ("k8s_keps/keps", {
        "status": ("status", r"(?m)^status:[ \t]*[\"']?\w", "yaml"),
        "stage": ("stage", r"(?m)^stage:[ \t]*[\"']?\w", "yaml"),
        "owning_sig": ("owning_sig", r"(?m)^owning-sig:[ \t]*[\"']?\w", "yaml"),
        "authors": ("author", r"(?m)^authors:", "yaml"),
        "milestone_alpha": ("milestone_alpha", r"(?m)^  alpha:[ \t]*[\"']?v", "yaml"),
        "feature_gate": ("feature_gate", r"(?m)^  - name:", "yaml"),
    }),
    "rust_rfcs": ("rust_rfcs/text", {
        "start_date": ("start_date", r"(?im)\A(?:.*\n){0,19}?[-*]\s*start date\s*:", "md"),
        "rfc_pr": ("rfc_pr", r"(?im)\A(?:.*\n){0,19}?[-*]\s*e?rfc pr\s*#?\s*:", "md"),
        "feature_name": ("feature_name", r"(?im)\A(?:.*\n){0,19}?[-*]\s*feature name\s*:\s*`?\w",
                         "md"),
    }),
}


def run(name: str, data: Path) -> dict[str, object]:
    folder, fields = CORPORA[name]
    root = data / folder
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "s.db"
        with Knotwork.open(None, db=str(db), embedder="none") as kw:
            t0 = time.perf_counter()
            report = kw.add_context(root, namespace=name.replace("-", "_"))
            took = time.perf_counter() - t0
        con = sqlite3.connect(db)
        # live facts by (source path, predicate)
        rows = con.execute(
            "SELECT d.path, f.predicate FROM facts f JOIN documents d ON d.id = f.document_id"
            " WHERE f.retracted_at IS NULL").fetchall()
        facts = con.execute("SELECT count(*) FROM facts WHERE retracted_at IS NULL").fetchone()
        con.close()
    by_path: dict[str, set[str]] = {}
    for path, predicate in rows:
        by_path.setdefault(path, set()).add(predicate)
    coverage: dict[str, str] = {}
    for field, (predicate, pattern, kind) in fields.items():
        stated = got = 0
        for f in sorted(root.rglob("kep.yaml" if kind == "yaml" else "*.md")):
            rel = f.relative_to(root).as_posix()
            if kind == "md" and report.parsed.get(rel, ("",))[0] not in ("adr", "rfc", "kep"):
                continue
            if re.search(pattern, f.read_text(encoding="utf-8", errors="replace")):
                stated += 1
                got += predicate in by_path.get(rel, set())
        coverage[field] = f"{got}/{stated} ({got / stated:.1%})" if stated else "0/0"
    types = Counter(kind for kind, _, _ in report.parsed.values())
    return {"corpus": name, "files": report.files, "seconds": round(took, 2),
            "files_per_s": round(report.files / took, 1), "records": report.records_added,
            "facts": facts[0] if facts else 0, "parsers": dict(types),
            "warnings": len(report.warnings), "errors": len(report.errors),
            "coverage": coverage}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--only", choices=sorted(CORPORA), action="append")
    args = ap.parse_args()
    for name in args.only or list(CORPORA):
        print(json.dumps(run(name, args.data)), flush=True)


if __name__ == "__main__":
    main()
