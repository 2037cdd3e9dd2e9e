"""How often is a plain-text mention really about the note it names? Prints one JSON line
per corpus (never a test).

    python bench/mentions.py                          # every corpus, 100 mentions each
    python bench/mentions.py --corpus adrs -v         # one corpus, each sampled mention
    python bench/mentions.py --corpus adrs --write    # add the sample's unjudged mentions
                                                      # to bench/mentions/adrs.tsv

Each corpus is ingested into a fresh store in a temporary folder (embedding off) and its
live ``mentions`` facts are listed in a fixed order; ``-n`` of them are drawn with a fixed
``--seed``. A mention is known by where it is cited and what it names: (path, line,
target). ``bench/mentions/<corpus>.tsv`` holds the mentions a person has judged, one a
row: the corpus, the path and line cited, the target entity and its title, the words the
prose names it by, the sentence (the fact's supporting text), a verdict (``y``: the text
is about that note; ``n``: it is not) and why. Judged rows are kept when the rules change,
so a sample drawn again under other rules reuses every verdict it can.

Per corpus: notes, facts, mentions (and their share of the facts), how many mentions are
of a one-word name, and for the sample: how many are judged, how many ``y``, and the
precision (y / judged) — ``null`` while any sampled mention is unjudged (run ``--write``,
then fill in its verdict by reading it).

    python bench/mentions.py --plant Data,Name,Find,Build,Example,Release

adds an empty note for each title to a copy of each corpus and counts the mentions of
them: every one is noise (the notes say nothing), which is what a Dendron vault's notes
titled by common words made of its prose.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JUDGED = HERE / "mentions"
# corpus -> folder (under --datasets, or the project's own example vault)
CORPORA = {
    "k8s_keps": "k8s_keps/keps",
    "adrs": "adrs",
    "rust_rfcs": "rust_rfcs/text",
    "foam_docs_vault": "foam_docs_vault/notes",
    "example": str(ROOT / "examples" / "vault"),
}
COLUMNS = ["corpus", "path", "line", "target", "title", "matched", "snippet", "verdict", "why"]

Key = tuple[str, str, str]  # path, line, target


def mentions_of(vault: Path) -> tuple[dict[str, int], list[dict[str, str]]]:
    """Ingest ``vault`` into a fresh store: its counts, and one row per live mention."""
    from knotwork import Knotwork
    from knotwork.ingest.mentions import ChunkText, MentionFinder
    from knotwork.types import mention_labels

    with tempfile.TemporaryDirectory() as tmp, \
            Knotwork.open(vault, db=str(Path(tmp) / "s.db"), embedder="none") as kw:
        kw.ingest()
        reader = kw.store.reader
        facts = reader.live_facts()
        rows = []
        for f in facts:
            if f.extractor != "mention" or f.source is None or f.object_id is None:
                continue
            snippet = " ".join(f.source.supporting_text.split())
            names = [(n.text, n.text.casefold(), n.kind) for n in reader.names_of(f.object_id)]
            finder = MentionFinder(mention_labels((key, kind, text) for text, key, kind in names))
            found = finder.find([ChunkText(1, snippet)])
            matched = surface(snippet, found[0].object.text) if found else "?"  # type: ignore[union-attr]
            rows.append({"corpus": "", "path": f.source.path, "line": str(f.source.line_start),
                         "target": f.value, "title": f.value_label or "",
                         "matched": matched, "snippet": snippet, "verdict": "", "why": ""})
        stats = reader.stats()
        counts = {"documents": int(stats.get("documents", 0)), "facts": len(facts),
                  "mentions": len(rows)}
    rows.sort(key=lambda r: (r["path"], int(r["line"]), r["target"]))
    return counts, rows


def surface(text: str, label: str) -> str:
    """The words of ``label`` as ``text`` writes them (its case, its separators)."""
    words = re.findall(r"\w+", label)
    m = re.search(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)", text,
                  re.IGNORECASE)
    return m.group(0) if m else label


def key(row: dict[str, str]) -> Key:
    return row["path"], row["line"], row["target"]


def read_judged(path: Path) -> dict[Key, dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(encoding="utf-8", newline="") as f:
        return {key(r): r for r in csv.DictReader(f, delimiter="\t")}


def write_judged(path: Path, rows: dict[Key, dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n")
        w.writeheader()
        for k in sorted(rows, key=lambda k: (k[0], int(k[1]), k[2])):
            w.writerow({c: rows[k].get(c, "") for c in COLUMNS})


def measure(corpus: str, vault: Path, *, n: int, seed: int, write: bool, verbose: bool
            ) -> dict[str, Any]:
    counts, rows = mentions_of(vault)
    for r in rows:
        r["corpus"] = corpus
    sample = random.Random(seed).sample(rows, min(n, len(rows)))
    path = JUDGED / f"{corpus}.tsv"
    judged = read_judged(path)
    verdicts = [judged[key(r)]["verdict"] if key(r) in judged else "" for r in sample]
    if write:
        new = {key(r): r for r in sample if key(r) not in judged}
        if new:
            write_judged(path, judged | new)
    if verbose:
        for r, v in zip(sample, verdicts, strict=True):
            print(f"{v or '?'}  {r['path']}:{r['line']}  [{r['matched']}] -> {r['title']}"
                  f" ({r['target']})\n     {r['snippet'][:300]}", file=sys.stderr)
    done = [v for v in verdicts if v in ("y", "n")]
    yes = done.count("y")
    single = sum(1 for r in rows if len(re.findall(r"\w+", r["matched"])) == 1)
    return {"corpus": corpus, **counts,
            "mention_share": round(counts["mentions"] / counts["facts"], 3)
            if counts["facts"] else 0.0,
            "one_word": single, "sample": len(sample), "judged": len(done), "yes": yes,
            "precision": round(yes / len(done), 3) if done and len(done) == len(sample)
            else None}


def planted(corpus: str, vault: Path, titles: list[str], *, verbose: bool) -> dict[str, Any]:
    """Mentions of notes titled ``titles`` added to a copy of ``vault``: each is noise, as
    the notes say nothing (the Dendron vault's "data", "Find", "Release")."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "v"
        shutil.copytree(vault, copy)
        for title in titles:
            (copy / "_planted").mkdir(exist_ok=True)
            (copy / "_planted" / f"{title}.md").write_text(f"# {title}\n", encoding="utf-8")
        _, rows = mentions_of(copy)
    hits = [r for r in rows if r["target"].startswith("kw:note/_planted/")]
    if verbose:
        for r in hits:
            print(f"  {r['path']}:{r['line']}  [{r['matched']}]  {r['snippet'][:200]}",
                  file=sys.stderr)
    by_title = {t: sum(r["title"] == t for r in hits) for t in titles}
    return {"corpus": corpus, "planted": len(titles), "mentions_of_planted": len(hits),
            "by_title": by_title}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA),
                    help="a corpus to measure (repeatable; default: all)")
    ap.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("-n", type=int, default=100, help="mentions sampled per corpus")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true",
                    help="add the sample's unjudged mentions to bench/mentions/<corpus>.tsv")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each sampled mention")
    ap.add_argument("--plant", default="",
                    help="comma-separated titles: count the mentions of empty notes so titled"
                         " added to a copy of each corpus, instead of sampling")
    args = ap.parse_args()
    for corpus in args.corpus or list(CORPORA):
        vault = args.datasets / CORPORA[corpus]
        if not vault.is_dir():
            print(f"{corpus}: no folder {vault} (see --datasets)", file=sys.stderr)
            return 2
        if args.plant:
            out = planted(corpus, vault, args.plant.split(","), verbose=args.verbose)
        else:
            out = measure(corpus, vault, n=args.n, seed=args.seed, write=args.write,
                          verbose=args.verbose)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
