"""The dependency direction of STYLE.md, enforced by walking every import with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import knotwork

ROOT = Path(knotwork.__file__).parent

# layer -> the knotwork layers it may import (itself always allowed)
ALLOWED: dict[str, set[str]] = {
    "domain": set(),  # the pure rules: below even the records, which re-export a few
    "types": {"domain"},
    "results": {"types"},
    "errors": set(),
    "limits": set(),  # the size limits every interface shares: plain numbers
    "invalid": set(),  # how every door words a refused argument
    "config": {"errors"},
    "checks": {"errors", "store", "limits"},
    "ingest": {"domain", "types", "errors"},  # (its parser: types and errors only)
    "store": {"domain", "types", "errors"},
    "embed": {"types", "errors"},
    "retrieve": {"domain", "types", "results", "errors", "store", "embed"},
    "render": {"types"},
    "assemble": {"types", "errors", "retrieve", "embed"},
    # a model, when one is configured: client, extraction over the store, cited answers
    "llm": {"domain", "types", "errors", "ingest", "store"},
    "sync": {"domain", "types", "errors", "ingest", "store"},
    "wiki": {"domain", "types", "errors", "ingest", "store", "sync"},
    "trust": {"domain", "types", "errors", "store", "results"},
    # the facade's rooms (``Knotwork``'s groups of methods), below its composition root
    "facade": {"domain", "types", "errors", "config", "checks", "ingest", "store", "embed",
               "retrieve", "render", "sync", "results", "wiki", "assemble", "llm", "trust",
               "limits"},
    "core": {"domain", "types", "errors", "config", "checks", "ingest", "store", "embed",
             "retrieve", "render", "sync", "results", "wiki", "assemble", "llm", "trust",
             "limits", "facade"},
    "cli": {"core", "types", "render", "errors", "config", "server", "mcp", "sync",
            "assemble", "limits"},
    "server": {"core", "types", "render", "errors", "config", "results", "mcp", "limits",
               "invalid"},
    "mcp": {"core", "types", "render", "errors", "config", "limits", "invalid"},
    "web": {"core", "types", "render", "errors"},
    "__init__": {"config", "core", "errors", "types"},
    "__main__": {"cli"},
}


def _layer(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = path.relative_to(ROOT.parent).with_suffix("").parts[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg[: len(pkg) - node.level + 1])
                mod = ".".join(base + ([node.module] if node.module else []))
                if not node.module:
                    found.update(f"{mod}.{a.name}" for a in node.names)
                    continue
            else:
                mod = node.module or ""
            found.add(mod)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m.split(".")[1] for m in found if m.startswith("knotwork.") and m.count(".") >= 1}


def test_no_layer_imports_a_higher_one() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        layer = _layer(path)
        assert layer in ALLOWED, f"unknown layer {layer} ({path})"
        for dep in _imports(path) - {layer}:
            if dep not in ALLOWED[layer]:
                bad.append(f"{path.relative_to(ROOT)} imports knotwork.{dep}")
    assert not bad, "\n".join(bad)


def test_a_query_process_never_loads_the_parser(tmp_path: Path) -> None:
    """`context` and `search` in a new process (every CLI call) skip the ingest modules."""
    db = _example_store(tmp_path)
    probe = (
        "import sys, knotwork\n"
        f"kw = knotwork.Knotwork.open(None, db={db!r}, embedder='none')\n"
        "assert kw.context('traefik').entities and kw.search('traefik')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('knotwork.sync',"
        " 'knotwork.ingest.'))))\n")
    assert _in_new_process(probe) == "[]"


def test_a_query_that_reads_no_vector_loads_no_embedder(tmp_path: Path) -> None:
    """`facts`, `entity` and `context` on a store without vectors, with the default
    embedder configured, in a new process: numpy and the embedding backends stay unloaded
    (they were ~0.1-0.2 s of every such CLI call)."""
    db = _example_store(tmp_path)
    probe = (
        "import sys, knotwork\n"
        f"kw = knotwork.Knotwork.open(None, db={db!r})\n"  # the default embedder
        "assert kw.facts('Traefik') and kw.entity('Traefik')\n"
        "ctx = kw.context('traefik')\n"
        "assert ctx.entities and ctx.summary.embedding_status == 'none'\n"
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith("
        "('knotwork.embed.minilm', 'knotwork.embed.hashing', 'knotwork.embed.openai',"
        " 'knotwork.embed.st', 'knotwork.retrieve.vectors', 'onnxruntime'))))\n")
    assert _in_new_process(probe) == "[]"


def test_a_parallel_ingest_leaves_the_parser_loaded_for_the_next_edit(tmp_path: Path) -> None:
    """Workers parse a large ingest; the parser is still imported here, before they fork,
    so this process's first edit afterwards (a watcher's) does not pay for the import."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(240):  # past the size at which a sync starts worker processes
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\nLinks to [[n{(i + 1) % 240}]].\n")
    probe = (
        "import sys, knotwork\n"
        f"kw = knotwork.Knotwork.open({str(vault)!r}, db={str(tmp_path / 'kw.db')!r},"
        " embedder='none', workers=2)\n"
        "assert kw.ingest().added == 240\n"
        "print('knotwork.ingest.markdown' in sys.modules)\n")
    assert _in_new_process(probe) == "True"


def _example_store(tmp_path: Path) -> str:
    """A store of the example vault, its text indexed and no chunk embedded."""
    examples = Path(__file__).resolve().parents[1] / "examples" / "vault"
    db = str(tmp_path / "kw.db")
    with knotwork.Knotwork.open(examples, db=db, embedder="none") as kw:
        kw.ingest()
    return db


def _in_new_process(code: str) -> str:
    """What ``code`` prints, run by a new Python (its modules loaded from nothing)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()
