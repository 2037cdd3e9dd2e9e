"""A vault of real notes replicated to size, and its cold structural ingest (never a test).

    python bench/garden.py --notes 10000                 # one cold ingest, one JSON line
    python bench/garden.py --notes 10000 --profile 25    # and cProfile's top 25 (CPU time)
    python bench/garden.py --notes 10000 --sql 20        # and the 20 costliest SQL statements
    python bench/garden.py --notes 1000 --keep /tmp/g1k  # leave the vault there

The notes are the shared docs corpora (``--datasets``): Foam's documentation (a vault of
wikilinks), the Rust RFCs, the Kubernetes KEPs and three ADR collections, 1,003 files of
real Markdown linking each other by wikilinks and relative links. Copy ``k`` of them lives
in ``copy-k/``; each file's name gets ``-ck`` (but in copy 0) and its title (its first
heading, or the ``title:`` of its frontmatter) `` k``, so every path and title is unique,
and every wikilink and relative link is rewritten to the copy's own file; one note in
ten gains a line linking the same note of another copy, so the copies are one graph.
Whatever prose says of a note is left as written: a copy's prose mentions copy 0's titles.
Real design documents run to 40 KB (a KEP) where a garden's notes are a page or two, so a
note is cut at ``--max-bytes`` (4,000 by default; 0 keeps it whole), at a blank line
outside code; the notes come in a fixed order, so the first 1,000 of any vault are alike.

Printed: wall seconds and notes/s of ``Knotwork.open(vault, embedder="none").ingest()``,
CPU milliseconds a note (this process and its workers), the mention pass's seconds
(``sync.refresh_mentions``), the live facts and a checksum of them (subject, predicate,
object, value, lines, supporting text, extractor: the same notes must give the same one).
``--profile`` and ``--sql`` time CPU, not the wall clock (steadier on a shared machine);
give them ``--workers 1`` to see the whole ingest in this process.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import hashlib
import io
import json
import pstats
import re
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from knotwork import Knotwork
from knotwork.sync import files as sync

CORPORA = ("foam_docs_vault", "rust_rfcs", "k8s_keps", "adrs")
_WIKILINK = re.compile(r"\[\[([^\]|#]+)([^\]]*)\]\]")
_MDLINK = re.compile(r"\]\(<?([^)\s>#]+\.md)(#[^)\s>]*)?>?\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_DOC_KEY = re.compile(r"\bdoc:(\d+)")


def _sources(datasets: Path) -> list[tuple[str, str]]:
    """``(path in the vault, text)`` of every Markdown file of the corpora, in order."""
    out = []
    for name in CORPORA:
        base = datasets / name
        for f in sorted(base.rglob("*.md")):
            if f.name == "README.md" and f.parent == base:
                continue  # the corpus's own description
            out.append((f"{name}/{f.relative_to(base)}",
                        f.read_text(encoding="utf-8", errors="replace")))
    return out


def _cut(text: str, max_bytes: int) -> str:
    """``text`` up to the last blank line outside code before ``max_bytes``."""
    if not max_bytes or len(text.encode()) <= max_bytes:
        return text
    size, fenced, keep = 0, False, 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        size += len(line.encode()) + 1
        if size > max_bytes:
            break
        if _FENCE.match(line):
            fenced = not fenced
        elif not line.strip() and not fenced:
            keep = i
    return "\n".join(lines[:keep or len(lines)]) + "\n"


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1][:-3]


def _renamed(path: str, k: int) -> str:
    return path if k == 0 else f"{path[:-3]}-c{k}.md"


def _copy(text: str, k: int, stems: set[str]) -> str:
    """``text`` of ``path`` as copy ``k``: links to its own copy, titles numbered."""
    if k == 0:
        return text

    def wiki(m: re.Match[str]) -> str:
        target = m.group(1).strip()
        last = target.rsplit("/", 1)[-1]
        if last.endswith(".md"):
            last = last[:-3]
        return f"[[{last}-c{k}{m.group(2)}]]" if last in stems else m.group(0)

    def md(m: re.Match[str]) -> str:
        dest = m.group(1)
        if "://" in dest:
            return m.group(0)
        return f"]({dest[:-3]}-c{k}.md{m.group(2) or ''})"

    text = _WIKILINK.sub(wiki, text)
    text = _MDLINK.sub(md, text)
    lines = text.split("\n")
    titled = False
    if lines and lines[0].strip() == "---":
        for i in range(1, min(len(lines), 60)):
            if lines[i].strip() == "---":
                break
            if lines[i].startswith("title:"):
                lines[i] = f"{lines[i].rstrip()} {k}"
                titled = True
    if not titled:
        for i, line in enumerate(lines):
            if line.startswith("# "):
                lines[i] = f"{line.rstrip()} {k}"
                break
    return "\n".join(lines)


def make_garden(root: Path, n: int, datasets: Path, *, max_bytes: int = 4000,
                seed: int = 5) -> list[str]:
    """Write ``n`` notes under ``root`` (see the module docstring); their paths."""
    notes = [(p, _cut(t, max_bytes)) for p, t in _sources(datasets)]
    stems = {_stem(p) for p, _ in notes}
    copies = (n + len(notes) - 1) // len(notes)
    paths = []
    for i in range(n):
        k, (path, text) = divmod(i, len(notes))[0], notes[i % len(notes)]
        body = _copy(text, k, stems)
        if copies > 1 and (i * 7 + seed) % 10 == 0:
            other = (k + 1 + (i % max(1, copies - 1))) % copies
            body += f"\n\nSee also [[{_stem(_renamed(path, other))}]].\n"
        rel = f"copy-{k}/{_renamed(path, k)}"
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(body, encoding="utf-8")
        paths.append(rel)
    return paths


def _cpu_s() -> float:
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def fact_checksum(db: Path, dump: str | None = None) -> tuple[int, str]:
    """(live facts, a hash of them) of the SQLite store ``db``: ids left out; ``dump``
    names a file to write them to, one a line, sorted."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            """SELECT s.key, f.predicate, o.key, f.value, f.line_start, f.line_end,
                      f.supporting_text, f.extractor, f.confidence, d.path
               FROM facts f JOIN entities s ON s.id = f.subject_id
               LEFT JOIN entities o ON o.id = f.object_id
               LEFT JOIN documents d ON d.id = f.document_id
               WHERE f.retracted_at IS NULL""").fetchall()
        paths = dict(con.execute("SELECT id, path FROM documents").fetchall())
    finally:
        con.close()
    h = hashlib.sha256()
    # a note's entity is keyed by its document's id, which the order of writes decides
    lines = sorted(_DOC_KEY.sub(lambda m: f"doc:{paths.get(int(m.group(1)))}", repr(row))
                   for row in rows)
    for line in lines:
        h.update(line.encode())
    if dump:
        Path(dump).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(rows), h.hexdigest()[:16]


class _TimedConnection(sqlite3.Connection):
    """A connection that adds up the CPU time of each SQL statement it runs (``--sql``)."""

    spent: collections.defaultdict[str, list[float]] = collections.defaultdict(
        lambda: [0, 0.0])

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        t = time.thread_time()
        try:
            return super().execute(sql, *args)
        finally:
            entry = self.spent[" ".join(sql.split())]
            entry[0] += 1
            entry[1] += time.thread_time() - t

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        t = time.thread_time()
        try:
            return super().executemany(sql, *args)
        finally:
            entry = self.spent["many: " + " ".join(sql.split())]
            entry[0] += 1
            entry[1] += time.thread_time() - t


def _time_sql() -> None:
    """Make every SQLite connection opened from now on a ``_TimedConnection``."""
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs.setdefault("factory", _TimedConnection)
        return real(*args, **kwargs)

    sqlite3.connect = connect  # type: ignore[assignment]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2]
                                              / "shared" / "datasets"),
                    help="the shared docs corpora (default: ../shared/datasets of the project)")
    ap.add_argument("--max-bytes", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--profile", type=int, default=0, help="print cProfile's top N")
    ap.add_argument("--sql", type=int, default=0, help="print the N costliest statements")
    ap.add_argument("--keep", help="write the vault here (kept) instead of a temporary one")
    ap.add_argument("--vault", help="ingest this vault as it is (made by --keep before)")
    ap.add_argument("--dump", help="write the live facts to this file, one a line")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kw-garden-"))
    try:
        if args.vault:
            vault = Path(args.vault)
            notes = sum(1 for _ in vault.rglob("*.md"))
        else:
            vault = Path(args.keep) if args.keep else tmp / "vault"
            if vault.exists():
                shutil.rmtree(vault)
            vault.mkdir(parents=True)
            notes = len(make_garden(vault, args.notes, Path(args.datasets),
                                    max_bytes=args.max_bytes))
        db = tmp / "store.db"
        prof = cProfile.Profile(time.process_time) if args.profile else None
        if args.sql:
            _time_sql()
        kw = Knotwork.open(vault, db=str(db), workers=args.workers, embedder="none")
        spent = [0.0]
        real = sync.refresh_mentions

        def timed(*a: object, **k: object) -> object:
            t = time.perf_counter()
            try:
                return real(*a, **k)  # type: ignore[arg-type]
            finally:
                spent[0] += time.perf_counter() - t

        sync.refresh_mentions = timed  # type: ignore[assignment]
        try:
            cpu0, t0 = _cpu_s(), time.perf_counter()
            if prof:
                prof.enable()
            report = kw.ingest()
            if prof:
                prof.disable()
            wall, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
        finally:
            sync.refresh_mentions = real
            kw.close()
        store_mb = sum(p.stat().st_size for p in tmp.glob("store.db*")) / 1e6
        facts, checksum = fact_checksum(db, args.dump)
        print(json.dumps({
            "notes": notes, "wall_s": round(wall, 2), "notes_per_s": round(notes / wall, 1),
            "wall_ms_per_note": round(wall * 1000 / notes, 3),
            "cpu_ms_per_note": round(cpu * 1000 / notes, 3),
            "mention_pass_s": round(spent[0], 2), "errors": len(report.errors),
            "facts": facts, "fact_checksum": checksum, "store_mb": round(store_mb, 1)}))
        if prof:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.profile)
            out.write("\n")
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.profile)
            print(out.getvalue())
        if args.sql:
            spent = _TimedConnection.spent
            print(f"SQL CPU s in this process: {sum(v[1] for v in spent.values()):.2f}")
            for sql, (n, s) in sorted(spent.items(), key=lambda kv: -kv[1][1])[:args.sql]:
                print(f"{s:8.2f} {int(n):8d}  {sql[:120]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
