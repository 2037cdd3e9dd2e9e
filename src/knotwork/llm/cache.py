"""What the model said about each chunk, kept in a SQLite file beside the store.

Keyed by ``sha256(model, prompt version, chunk text)``: a chunk whose text
is unchanged costs no call on a re-run, wherever it moved in its note or in which note
it sits; another model or another prompt version asks again. A file of its own rather
than a store table: it is a cache of a remote service's answers, which any store backend
can use, and deleting it loses nothing but the calls it saved.

Each answer is written as soon as it arrives (one short transaction), so a run stopped
by its budget, a crash or Ctrl-C resumes where it was.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from .triples import Triple

__all__ = ["CachedAnswer", "ExtractionCache", "chunk_key"]


def chunk_key(model: str, prompt_version: str, text: str) -> str:
    """The cache key of one chunk's extraction."""
    h = hashlib.sha256()
    for part in (model, prompt_version, text):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """One chunk's triples; ``status`` ``ok`` or ``unparseable`` (the model's reply held
    no JSON even when asked twice: cached as no triples, so it is not paid for again)."""

    triples: tuple[Triple, ...]
    status: str
    prompt_tokens: int
    completion_tokens: int


class ExtractionCache:
    """A key → answer table in one SQLite file (``:memory:`` for none on disk)."""

    def __init__(self, path: str) -> None:
        self.path = path
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS answers(key TEXT PRIMARY KEY, model TEXT NOT NULL,"
                " prompt_version TEXT NOT NULL, status TEXT NOT NULL, triples TEXT NOT NULL,"
                " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
                " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ')))")
            self._con.commit()
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open the extraction cache {path}: {exc}",
                              key="llm_cache") from exc
        self._lock = threading.Lock()

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedAnswer]:
        wanted = sorted(set(keys))
        out: dict[str, CachedAnswer] = {}
        with self._lock:
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                rows = self._con.execute(
                    "SELECT key, status, triples, prompt_tokens, completion_tokens FROM answers"
                    f" WHERE key IN ({','.join('?' * len(part))})", part).fetchall()
                for key, status, triples, pt, ct in rows:
                    items = tuple(Triple(**t) for t in json.loads(triples))
                    out[key] = CachedAnswer(items, status, pt, ct)
        return out

    def put(self, key: str, answer: CachedAnswer, *, model: str, prompt_version: str) -> None:
        body = json.dumps([t.as_dict() for t in answer.triples], ensure_ascii=False)
        with self._lock:
            self._con.execute(
                "INSERT OR REPLACE INTO answers(key, model, prompt_version, status, triples,"
                " prompt_tokens, completion_tokens) VALUES(?,?,?,?,?,?,?)",
                (key, model, prompt_version, answer.status, body, answer.prompt_tokens,
                 answer.completion_tokens))
            self._con.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._con.execute("SELECT count(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._con.close()
