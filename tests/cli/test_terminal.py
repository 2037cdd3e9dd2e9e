"""``knotwork ingest`` on a terminal: progress bars, and the worker processes all the same."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.reliability.helpers import children, cli, env, make_vault

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="pseudo-terminals and /proc as Linux has them")


def _read_all(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed with the process
            return out
        if not chunk:
            return out
        out += chunk


def _on_terminal(args: list[str], environ: dict[str, str]) -> tuple[int, str, set[int]]:
    """Run the CLI on a pseudo-terminal: (exit code, what it showed, its child pids)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, env=environ, stdin=follower, stdout=follower,
                            stderr=follower, close_fds=True)
    os.close(follower)
    workers: set[int] = set()
    while proc.poll() is None:
        workers |= children(proc.pid)
        time.sleep(0.01)
    shown = _read_all(leader).decode("utf-8", "replace")
    os.close(leader)
    return proc.returncode, shown, workers


def test_ingest_on_a_terminal_draws_progress_and_still_forks_its_workers(
        tmp_path: Path) -> None:
    # The progress display used rich's refresh thread; a sync forks workers only from a
    # process with no other thread, so on a terminal every ingest ran in one process.
    vault = make_vault(tmp_path / "vault", 600)
    db = tmp_path / "s.db"
    code, shown, workers = _on_terminal(
        cli("--db", str(db), "ingest", str(vault), "--no-embed"),
        env(KNOTWORK_WORKERS="2", TERM="xterm", COLUMNS="100"))
    assert code == 0, shown
    assert "added 605" in shown, shown
    assert "\x1b[" in shown, "no progress display was drawn"  # (drawn, then cleared)
    assert len(workers) >= 2, f"the ingest ran without its worker processes: {workers}"


def test_a_first_watch_catches_up_with_its_workers(tmp_path: Path) -> None:
    # The watcher's thread started before the catch-up, so a first ``watch`` of a vault
    # (a whole ingest) ran in one process.
    vault = make_vault(tmp_path / "vault", 600)
    lines: list[str] = []
    workers: set[int] = set()
    with subprocess.Popen(cli("--db", str(tmp_path / "s.db"), "watch", "--vault", str(vault),
                              "--json"),
                          env=env(KNOTWORK_WORKERS="2", KNOTWORK_EMBEDDER="none"),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
        reader.start()
        deadline = time.monotonic() + 180
        try:
            while not any('"watching"' in line for line in lines):
                assert proc.poll() is None, lines
                assert time.monotonic() < deadline, "no catch-up in 180 s"
                workers |= children(proc.pid)
                time.sleep(0.01)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            reader.join(timeout=10)
    events = [json.loads(line) for line in lines if line.strip()]
    assert events[0]["event"] == "applied" and events[0]["added"] == 605, events[:2]
    assert [e["event"] for e in events].count("applied") == 1  # nothing changed meanwhile
    assert len(workers) >= 2, f"the catch-up ran without its worker processes: {workers}"


def test_embedding_on_a_terminal_runs_the_model_in_a_process_a_core(tmp_path: Path) -> None:
    # The same rule as the sync's workers: the progress display starts no thread, so a
    # first index on a terminal embeds in its worker processes (``embed.pool``).
    vault = make_vault(tmp_path / "vault", 150)
    db = tmp_path / "s.db"
    done = subprocess.run(cli("--db", str(db), "ingest", str(vault), "--no-embed", "--json"),
                          env=env(KNOTWORK_EMBEDDER="minilm-q8"), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    chunks = json.loads(subprocess.run(
        cli("--db", str(db), "stats", "--json"), env=env(KNOTWORK_EMBEDDER="minilm-q8"),
        capture_output=True, text=True, timeout=60, check=True).stdout)["chunks"]
    assert chunks >= 256, "too few chunks for the pool: make the vault larger"
    code, shown, workers = _on_terminal(
        cli("--db", str(db), "reindex", "--embeddings"),
        env(KNOTWORK_EMBEDDER="minilm-q8", KNOTWORK_WORKERS="2", TERM="xterm",
            COLUMNS="100"))
    assert code == 0, shown
    assert f"embedded {chunks} chunks" in shown and "(2 processes)" in shown, shown
    assert len(workers) >= 2, f"the model ran without its worker processes: {workers}"
