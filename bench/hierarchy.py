"""Folder hierarchy facts per corpus: how many ``part_of`` facts a folder states, how many
reach a page, and whether each reaches the page an independent reading of the file list
names.

The check recomputes, from the vault's Markdown paths alone, the page each note's folder
should have (``folder/index.md``, ``_index.md``, ``folder.md`` beside it,
``folder/folder.md``, ``folder/README.md``, first found; a folder's page is part of the
folder above) and compares it with what the store resolved the fact to.

    python bench/hierarchy.py [VAULT ...]     # default: the shared docs corpora
"""

from __future__ import annotations

import argparse
import json
import posixpath
import random
import tempfile
from pathlib import Path

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
CORPORA = ("k8s_keps", "adrs", "rust_rfcs", "foam_docs_vault")


def _expected(paths: set[str]) -> dict[str, str | None]:
    """Note path → the path of its folder's page (None: a folder with no page; absent: a
    note at the root, or a top-level folder's page)."""
    lower = {p.casefold(): p for p in paths}

    def page_of(folder: str) -> str | None:
        base = posixpath.basename(folder)
        for cand in (f"{folder}/index.md", f"{folder}/_index.md", f"{folder}.md",
                     f"{folder}/{base}.md", f"{folder}/README.md"):
            if cand.casefold() in lower:
                return lower[cand.casefold()]
        return None

    out: dict[str, str | None] = {}
    for p in paths:
        bare = p[:-3]
        folder, stem = posixpath.split(bare)
        if folder and (stem.casefold() in ("index", "_index", "readme")
                       or stem.casefold() == posixpath.basename(folder).casefold()):
            folder = posixpath.dirname(folder)
        if folder:
            out[p] = page_of(folder)
    return out


def measure(vault: Path, samples: int = 3) -> dict[str, object]:
    from knotwork import Knotwork

    paths = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    want = _expected(paths)
    with tempfile.TemporaryDirectory() as tmp, \
            Knotwork.open(vault, db=str(Path(tmp) / "s.db"), embedder="none") as kw:
        kw.ingest()
        facts = [f for f in kw.store.reader.live_facts()
                 if f.extractor == "hierarchy" and f.predicate == "part_of"]
        iri_path = {kw.entity(p[:-3]).entity.iri: p for p in paths}
        got: dict[str, str | None] = {}
        for f in facts:
            src = f.source.path if f.source else ""
            got[src] = None if f.value.endswith("/") else iri_path.get(f.value, f.value)
        stats = kw.stats()
    resolved = {p: q for p, q in got.items() if q is not None}
    wrong = sorted((p, got.get(p), want.get(p)) for p in set(got) | set(want)
                   if got.get(p) != want.get(p))
    rng = random.Random(7)
    shown = rng.sample(sorted(resolved.items()), min(samples, len(resolved)))
    return {"vault": vault.name, "notes": len(paths), "part_of": len(facts),
            "to_a_page": len(resolved), "pageless": len(facts) - len(resolved),
            "pages": len(set(resolved.values())), "wrong": len(wrong),
            "wrong_examples": wrong[:5], "examples": shown, "entities": stats.entities}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vaults", nargs="*", type=Path)
    args = ap.parse_args()
    for vault in args.vaults or [DATASETS / c for c in CORPORA]:
        print(json.dumps(measure(vault)), flush=True)


if __name__ == "__main__":
    main()
