"""Concurrency with real processes on one store and vault: two cold ingests at once, then
a watcher and the REST server while a script makes random edits, renames, deletes and
atomic saves and a client asks for context throughout. The store must end equal to a
fresh ingest of the same files, with no error surfaced to anyone: no 5xx, no "database is
locked", no traceback, and ``knotwork check`` passes.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path

import httpx

from .helpers import cli, env, fingerprint, make_vault, random_edit

NOTES = 300
EDITS = 200


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settle(db: Path, *, quiet: float = 2.5, timeout: float = 60) -> dict[str, object]:
    """The store's fingerprint once it has stopped changing for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = fingerprint(db), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = fingerprint(db)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    raise AssertionError("the store never settled")


def test_ingests_watcher_and_server_on_one_store_end_equal_to_a_fresh_ingest(
        tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", NOTES)
    db = tmp_path / "s.db"
    logs = [tmp_path / f"{n}.log" for n in ("ingest1", "ingest2", "watch", "serve")]
    with open(logs[0], "w", encoding="utf-8") as one, open(logs[1], "w",
                                                           encoding="utf-8") as other:
        two = [subprocess.Popen(cli("--db", str(db), "ingest", str(vault), "-q"),
                                env=env(KNOTWORK_WORKERS="2"), stdout=subprocess.DEVNULL,
                                stderr=log) for log in (one, other)]
        for proc in two:
            assert proc.wait(timeout=120) == 0, [p.read_text() for p in logs[:2]]
    port = _free_port()
    errors: list[str] = []
    with open(logs[2], "w", encoding="utf-8") as wlog, \
            open(logs[3], "w", encoding="utf-8") as slog:
        watch = subprocess.Popen(cli("--db", str(db), "watch", "--vault", str(vault)),
                                 env=env(), stdout=subprocess.DEVNULL, stderr=wlog)
        serve = subprocess.Popen(cli("--db", str(db), "serve", "--vault", str(vault),
                                     "--port", str(port)),
                                 env=env(), stdout=subprocess.DEVNULL, stderr=slog)
        try:
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
            deadline = time.monotonic() + 30
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline and serve.poll() is None, logs[3].read_text()
                time.sleep(0.1)
            stop = threading.Event()
            asked = [0]

            def ask() -> None:
                rnd = random.Random(1)
                while not stop.is_set():
                    q = f"Service {rnd.randrange(NOTES)}"
                    r = client.post("/context", json={"query": q, "max_tokens": 800})
                    asked[0] += 1
                    if r.status_code != 200:
                        errors.append(f"{r.status_code}: {r.text[:200]}")

            asker = threading.Thread(target=ask)
            asker.start()
            rnd = random.Random(7)
            for _ in range(EDITS // 10):  # a few hundred changes over ~10 s
                random_edit(vault, rnd, NOTES, 10)
                time.sleep(0.5)
            stop.set()
            asker.join(timeout=60)
            client.close()
            settled = _settle(db)
        finally:
            for proc in (watch, serve):
                proc.send_signal(2)
                proc.wait(timeout=20)
    assert not errors, errors[:5]
    print(f"{asked[0]} context answers")  # (shown with pytest -s)
    assert asked[0] > 20
    for log in logs:
        text = log.read_text(encoding="utf-8")
        assert "Traceback" not in text and "database is locked" not in text, (log, text[-2000:])
    fresh = tmp_path / "fresh.db"
    subprocess.run(cli("--db", str(fresh), "ingest", str(vault), "-q"), env=env(), check=True,
                   timeout=120)
    expected = fingerprint(fresh)
    assert settled["documents"] == expected["documents"]
    assert settled == expected
    check = subprocess.run(cli("--db", str(db), "check"), env=env(), capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
