"""Shared pieces of the reliability tests: generated vaults, processes, store fingerprints."""

from __future__ import annotations

import os
import random
import sqlite3
import sys
from pathlib import Path

HOSTS = ["kota", "vega", "lima", "orion", "sirius"]


def note(i: int, rnd: random.Random, n: int) -> str:
    others = rnd.sample(range(n), 3)
    host = rnd.choice(HOSTS)
    return (f"---\ntype: service\nruns_on: \"[[{host}]]\"\nport: {1000 + i}\n---\n"
            f"# Service {i}\n\nService {i} depends on [[Service {others[0]}]] and talks to"
            f" Service {others[1]} over HTTP.\n\n## Notes\n\nOwned by team {i % 7}; see"
            f" [[Service {others[2]}]]. #ops\n")


def make_vault(root: Path, n: int, *, seed: int = 0) -> Path:
    rnd = random.Random(seed)
    for i in range(n):
        path = root / f"svc/{i // 100:02d}/Service {i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note(i, rnd, n), encoding="utf-8")
    for h in HOSTS:
        (root / "hosts").mkdir(parents=True, exist_ok=True)
        (root / "hosts" / f"{h}.md").write_text(f"---\ntype: host\n---\n# {h}\n\nA host.\n",
                                               encoding="utf-8")
    return root


def random_edit(root: Path, rnd: random.Random, n: int, k: int) -> None:
    """``k`` random edits, renames, deletes, atomic saves and creations."""
    for _ in range(k):
        files = sorted(root.rglob("*.md"))
        f = rnd.choice(files)
        what = rnd.random()
        if what < 0.4:
            f.write_text(f.read_text(encoding="utf-8") + f"\nEdited {rnd.random()}; see"
                         f" [[Service {rnd.randrange(n)}]].\n", encoding="utf-8")
        elif what < 0.55:
            f.rename(f.with_name(f"moved {rnd.randrange(10**6)}.md"))
        elif what < 0.7 and len(files) > 10:
            f.unlink()
        elif what < 0.85:  # an editor's atomic save: write a temp file, rename it over
            tmp = f.with_name(f".{f.name}.tmp")
            tmp.write_text(f.read_text(encoding="utf-8").replace("HTTP", "gRPC"),
                           encoding="utf-8")
            os.replace(tmp, f)
        else:
            i = n + rnd.randrange(10**6)
            (root / f"new {i}.md").write_text(note(i, rnd, n), encoding="utf-8")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "knotwork", *args]


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("KNOTWORK_")}
    e.update(PYTHONUNBUFFERED="1", KNOTWORK_SYNCHRONOUS="NORMAL", KNOTWORK_EMBEDDER="hash",
             KNOTWORK_DEBOUNCE_MS="100")
    src = str(Path(__file__).resolve().parents[2] / "src")
    e["PYTHONPATH"] = src + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra)
    return e


def children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (from /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def fingerprint(db: Path) -> dict[str, object]:
    """What a store says, without its ids or times: equal for stores that say the same."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        docs = sorted(con.execute("SELECT scope, path, content_hash FROM documents"
                                  " WHERE deleted_at IS NULL"))
        facts = sorted(con.execute(
            "SELECT d.path, s.iri, f.predicate, f.value, COALESCE(o.iri, ''), f.line_start,"
            " f.line_end, f.trust, f.confidence FROM facts f JOIN entities s ON s.id ="
            " f.subject_id LEFT JOIN entities o ON o.id = f.object_id LEFT JOIN documents d"
            " ON d.id = f.document_id WHERE f.retracted_at IS NULL"))
        chunks = sorted(con.execute(
            "SELECT d.path, c.ord, c.heading, c.text, c.line_start, c.line_end FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.live = 1"))
        vectors = con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1 AND embedded = 0"
                              ).fetchone()[0]
        return {"documents": docs, "facts": facts, "chunks": chunks, "unembedded": vectors}
    finally:
        con.close()


def count_documents(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return int(con.execute("SELECT COUNT(*) FROM versions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()
