"""Crash safety with real processes: ``kill -9`` of a real ``knotwork ingest`` at random
points of its phases (parse and write in worker processes, mentions, embedding), in a
loop with random edits between the runs; then a sync must leave the store equal to a
fresh ingest of the same files, ``knotwork check`` must pass, and no process of a killed
ingest may survive it (before the fix, its forked workers went on committing batches and
then idled forever holding the store open). SIGTERM stops the pool as Ctrl-C does.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

from .helpers import (
    alive,
    children,
    cli,
    count_documents,
    env,
    fingerprint,
    make_vault,
    random_edit,
)

NOTES = 1200  # past the 200 files from which an ingest starts worker processes


def _start(db: Path, vault: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cli("--db", str(db), "ingest", str(vault), "-q", *extra),
                            env=env(KNOTWORK_WORKERS="2"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _watch(proc: subprocess.Popen[bytes], seconds: float, *, after_workers: bool = False
           ) -> set[int]:
    """The processes ``proc`` started (its workers) until ``seconds`` have passed, counted
    from when the first worker appeared if ``after_workers`` (so a kill lands mid-pool on a
    fast machine as on a slow one)."""
    seen: set[int] = set()
    deadline = time.monotonic() + (30 if after_workers else seconds)
    while time.monotonic() < deadline and proc.poll() is None:
        kids = children(proc.pid)
        if after_workers and kids and not seen:
            deadline = time.monotonic() + seconds
        seen |= kids
        time.sleep(0.02)
    return seen


def _none_survive(pids: set[int], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, f"workers outlived the ingest: {pids}"
        time.sleep(0.02)


def _settled(db: Path) -> None:
    """No commit lands after the kill: what the store holds stays as it is."""
    before = count_documents(db)
    time.sleep(1.0)
    assert count_documents(db) == before, "a worker committed after its ingest was killed"


def test_kill_9_at_random_points_then_sync_equals_a_fresh_ingest(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", NOTES)
    db = tmp_path / "s.db"
    rnd = random.Random(30)
    kills = 0
    for round_ in range(5):
        # a cold ingest first, then re-syncs that read every file again (--force), each
        # killed at a random point of whichever phase it is in
        proc = _start(db, vault, *(("--force",) if round_ else ()))
        # mostly while the pool runs (parse and write, then mentions), sometimes before it
        # (scan, plan) or after it (embedding)
        early = rnd.random() < 0.25
        workers = _watch(proc, rnd.uniform(0.1, 0.6) if early else rnd.uniform(0.0, 1.5),
                         after_workers=not early)
        if proc.poll() is None:
            workers |= children(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=10)
            kills += 1
            _none_survive(workers)
            _settled(db)
        else:
            _, stderr = proc.communicate()
            assert proc.returncode == 0, stderr.decode()
        random_edit(vault, rnd, NOTES, 30 + 20 * round_)
    print(f"{kills} of 5 runs killed")  # (shown with pytest -s)
    assert kills >= 3  # the loop did kill mid-run (each run takes seconds)
    done = subprocess.run(cli("--db", str(db), "ingest", str(vault), "-q"), env=env(),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    fresh = tmp_path / "fresh.db"
    subprocess.run(cli("--db", str(fresh), "ingest", str(vault), "-q"), env=env(), check=True,
                   timeout=180)
    assert fingerprint(db) == fingerprint(fresh)
    check = subprocess.run(cli("--db", str(db), "check"), env=env(), capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


def test_sigterm_stops_the_pool_as_ctrl_c_does(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", NOTES)
    db = tmp_path / "s.db"
    proc = _start(db, vault)
    # 0.3 s after the first worker appears: mid-pool however fast the machine
    workers = _watch(proc, 0.3, after_workers=True)
    assert workers, "the ingest started no worker processes"
    assert proc.poll() is None, "the ingest ended before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=10)
    assert proc.returncode != 0 and b"Traceback" not in stderr, stderr.decode()
    _none_survive(workers)
    _settled(db)
    again = subprocess.run(cli("--db", str(db), "ingest", str(vault), "-q"), env=env(),
                           capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    check = subprocess.run(cli("--db", str(db), "check"), env=env(), capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
