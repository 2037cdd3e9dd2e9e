"""knotwork's first index without vectors against LlamaIndex's PropertyGraphIndex, paired.

    python -m venv /tmp/li-venv && /tmp/li-venv/bin/pip install llama-index-core
    python bench/garden.py --notes 10000 --keep /tmp/g10k        # the notes (real, replicated)
    python bench/llamaindex_pair.py --vault /tmp/g10k --pairs 2 --li-python /tmp/li-venv/bin/python

LlamaIndex is no dependency of knotwork: it runs in its own interpreter (``--li-python``),
this same file run with ``--llamaindex VAULT``. Each side is a fresh process, timed from
outside (wall, and CPU with every child process) and from inside (the index build alone,
imports and start-up left out), in adjacent pairs A B A B so both see the same load:

- knotwork: ``Knotwork.open(vault, db=<new file>, embedder="none").ingest()``, what
  ``knotwork ingest --no-embed`` runs: every note parsed, chunked, its links, frontmatter
  and typed fields made facts with citations, plain-text mentions of notes found, all in
  a durable SQLite store with its full-text indexes;
- LlamaIndex: ``PropertyGraphIndex.from_documents`` over the same files (read as
  ``Document``s with their path), with its default splitter, no LLM and no embeddings
  (``embed_kg_nodes=False``), its ``kg_extractors`` one regex extractor of wikilink and
  relative-link triples (note → links_to → note) and the ``ImplicitPathExtractor``
  (chunk ↔ source document), into its in-memory ``SimplePropertyGraphStore``. It does less:
  no store on disk, no full-text index, no frontmatter, no mentions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_WIKILINK = re.compile(r"\[\[([^\]|#]+)")
_MDLINK = re.compile(r"\]\(<?([^)\s>#]+\.md)")


def _llamaindex(vault: Path) -> dict[str, Any]:
    """Build the PropertyGraphIndex of ``vault`` in this process (LlamaIndex's interpreter)."""
    t_import = time.perf_counter()
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.graph_stores.types import (
        KG_NODES_KEY,
        KG_RELATIONS_KEY,
        EntityNode,
        Relation,
    )
    from llama_index.core.indices.property_graph import ImplicitPathExtractor
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import BaseNode, TransformComponent

    class LinkExtractor(TransformComponent):  # type: ignore[misc]
        """note → links_to → note, for each wikilink or relative link of a chunk."""

        def __call__(self, nodes: list[BaseNode], **kwargs: Any) -> list[BaseNode]:
            for node in nodes:
                path = node.metadata["path"]
                text = node.get_content()
                targets = {m.group(1).strip().rsplit("/", 1)[-1].removesuffix(".md")
                           for rx in (_WIKILINK, _MDLINK) for m in rx.finditer(text)}
                if not targets:
                    continue
                src = EntityNode(name=path.rsplit("/", 1)[-1][:-3], label="note")
                kg_nodes = node.metadata.pop(KG_NODES_KEY, []) + [src]
                kg_rels = node.metadata.pop(KG_RELATIONS_KEY, [])
                for t in sorted(targets):
                    dst = EntityNode(name=t, label="note")
                    kg_nodes.append(dst)
                    kg_rels.append(Relation(label="links_to", source_id=src.id,
                                            target_id=dst.id))
                node.metadata[KG_NODES_KEY] = kg_nodes
                node.metadata[KG_RELATIONS_KEY] = kg_rels
            return nodes

    imports = time.perf_counter() - t_import
    t0 = time.perf_counter()
    docs = [Document(text=f.read_text(encoding="utf-8"),
                     metadata={"path": str(f.relative_to(vault))})
            for f in sorted(vault.rglob("*.md"))]
    index = PropertyGraphIndex.from_documents(
        docs, llm=MockLLM(), kg_extractors=[LinkExtractor(), ImplicitPathExtractor()],
        embed_kg_nodes=False, use_async=False, show_progress=False)
    build = time.perf_counter() - t0
    store = index.property_graph_store
    triples = store.get_triplets(relation_names=["links_to"])
    return {"side": "llamaindex", "notes": len(docs), "build_s": round(build, 2),
            "imports_s": round(imports, 2), "links_to_triples": len(triples)}


def _knotwork(vault: Path) -> dict[str, Any]:
    """Ingest ``vault`` into a new SQLite store, no vectors, in this process."""
    t_import = time.perf_counter()
    from knotwork import Knotwork

    imports = time.perf_counter() - t_import
    tmp = Path(tempfile.mkdtemp(prefix="kw-pair-"))
    try:
        t0 = time.perf_counter()
        kw = Knotwork.open(vault, db=str(tmp / "store.db"), embedder="none")
        try:
            report = kw.ingest()
            build = time.perf_counter() - t0
            facts = kw.stats().facts
        finally:
            kw.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"side": "knotwork", "notes": report.added, "build_s": round(build, 2),
            "imports_s": round(imports, 2), "facts": facts}


def _run(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one side in a fresh process: its own numbers, plus wall and CPU seen outside."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result.update(process_wall_s=round(wall, 2), process_cpu_s=round(cpu, 2))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", help="the notes (bench/garden.py --keep makes them)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--li-python", default="/tmp/li-venv/bin/python",
                    help="an interpreter with llama-index-core installed")
    ap.add_argument("--llamaindex", metavar="VAULT", help=argparse.SUPPRESS)
    ap.add_argument("--knotwork", metavar="VAULT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.llamaindex:
        print(json.dumps(_llamaindex(Path(args.llamaindex))))
        return
    if args.knotwork:
        print(json.dumps(_knotwork(Path(args.knotwork))))
        return
    if not args.vault:
        ap.error("--vault is required")
    me = str(Path(__file__).resolve())
    env = dict(os.environ)
    li_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    li_env.update(OPENAI_API_KEY="unused", TOKENIZERS_PARALLELISM="false")
    sides = {"knotwork": ([sys.executable, me, "--knotwork", args.vault], env),
             "llamaindex": ([args.li_python, me, "--llamaindex", args.vault], li_env)}
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in sides}
    for _ in range(args.pairs):
        for name, (cmd, side_env) in sides.items():
            r = _run(cmd, side_env)
            runs[name].append(r)
            print(json.dumps(r), flush=True)
    summary = {}
    for name, rs in runs.items():
        notes = rs[0]["notes"]
        summary[name] = {
            "build_s": [r["build_s"] for r in rs],
            "process_wall_s": [r["process_wall_s"] for r in rs],
            "process_cpu_ms_per_note": [round(r["process_cpu_s"] * 1000 / notes, 2)
                                        for r in rs]}
    print(json.dumps({"summary": summary}))


if __name__ == "__main__":
    sys.exit(main())
