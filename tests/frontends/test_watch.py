"""``knotwork watch`` as a real process, and two processes writing one store at once."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from knotwork import Knotwork

from .conftest import child_env, knotwork_cmd, running, wait_for

# The second process: asserts facts, writes notes the watcher must pick up, sends agent
# documents, and now and then syncs the vault itself (two syncers on one store).
WRITER = """
import sys
from pathlib import Path
from knotwork import Knotwork

vault, db, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
with Knotwork.open(vault, db=db) as kw:
    for i in range(n):
        kw.assert_fact(f"Svc{i % 7}", "tag", f"t{i}", reason="load test")
        if i % 30 == 0:
            note = vault / "gen" / f"n{i}.md"
            note.parent.mkdir(exist_ok=True)
            note.write_text(f'---\\nabout: "[[kota]]"\\n---\\n# n{i}\\n\\nNote {i}.\\n')
            kw.ingest_document(f"agent/{i}", f"Agent {i}", "test", f"Agent note {i} on kota.",
                               entities=[{"name": "kota"}])
        if i % 100 == 50:
            kw.ingest()
print("done")
"""


def _events(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_watch_applies_edits_live_and_stops_cleanly_on_ctrl_c(vault: Path,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", str(tmp_path / "s.db"), "watch", "--vault", str(vault), "--json")
    with open(out, "w", encoding="utf-8") as stdout, \
            running(cmd, tmp_path / "watch.log", stdout=stdout) as proc:
        wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
        assert _events(out)[0] == {"event": "applied", **_events(out)[0]}
        assert _events(out)[0]["added"] == 4  # the catch-up

        (vault / "hosts" / "kota.md").write_text("---\ntype: host\nos: alpine\n---\n# kota\n",
                                                 encoding="utf-8")
        (vault / "people" / "Alice.md").unlink()
        applied = wait_for(lambda: [e for e in _events(out)[2:] if e["event"] == "applied"])
        wait_for(lambda: sum(e.get("updated", 0) + e.get("deleted", 0)
                             for e in _events(out)[2:]) >= 2)
        assert not applied[0]["errors"]
        proc.send_signal(2)  # Ctrl-C
        assert proc.wait(timeout=10) == 0
    log = (tmp_path / "watch.log").read_text(encoding="utf-8")
    assert "Traceback" not in log
    with Knotwork.open(vault, db=str(tmp_path / "s.db")) as kw:
        assert {f.value for f in kw.facts("kota")} >= {"alpine"}
        assert kw.stats()["documents"] == 3


def test_a_watcher_and_a_writer_share_one_store_without_losing_a_write(
        vault: Path, tmp_path: Path) -> None:
    db, n = str(tmp_path / "s.db"), 300
    out = tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", db, "watch", "--vault", str(vault), "--json")
    with open(out, "w", encoding="utf-8") as stdout, \
            running(cmd, tmp_path / "watch.log", stdout=stdout) as watcher:
        wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
        writer = subprocess.run(
            [cmd[0], "-c", WRITER, str(vault), db, str(n)], capture_output=True, text=True,
            env=child_env(), timeout=120, check=False)
        assert writer.returncode == 0, writer.stderr
        assert writer.stdout.strip() == "done"
        notes = n // 30

        def caught_up() -> bool:
            with Knotwork.open(vault, db=db) as kw:
                return bool(kw.stats()["documents"] == 4 + 2 * notes)

        wait_for(caught_up, timeout=10)
        watcher.send_signal(2)
        assert watcher.wait(timeout=10) == 0
    events = _events(out)
    assert not [e for e in events if e["event"] == "error" or e.get("errors")]
    # n270.md came after the writer's last sync: the watcher, not the writer, applied it
    assert sum(e.get("added", 0) for e in events[2:]) >= 1
    assert "Traceback" not in (tmp_path / "watch.log").read_text(encoding="utf-8")

    with Knotwork.open(vault, db=db) as kw:
        tags = [f.value for k in range(7) for f in kw.facts(f"Svc{k}") if f.trust == "asserted"]
        assert sorted(int(v[1:]) for v in tags) == list(range(n))  # none lost, none doubled
        for i in range(0, n, 30):
            assert kw.entity(f"n{i}").entity.label == f"n{i}"
            assert kw.entity(f"agent/{i}")
        stats = kw.stats()
        assert stats["retracted_facts"] == 0
        assert isinstance(stats["events"], int) and stats["events"] >= n + 2 * notes


def test_watch_follows_the_pattern_option_like_its_catch_up(vault: Path, tmp_path: Path) -> None:
    (vault / "log").mkdir()
    (vault / "log" / "2026-11.txt").write_text("# November\n\nMoved [[Grafana]] to kota.\n",
                                               encoding="utf-8")
    db, out = str(tmp_path / "s.db"), tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", db, "watch", "--vault", str(vault), "--json",
                       "--pattern", "**/*.md", "--pattern", "log/*.txt")
    with open(out, "w", encoding="utf-8") as stdout, \
            running(cmd, tmp_path / "watch.log", stdout=stdout) as proc:
        wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
        assert _events(out)[0]["added"] == 5  # the four notes and the .txt the globs cover
        (vault / "log" / "2026-12.txt").write_text("# December\n\nNothing moved.\n",
                                                   encoding="utf-8")
        (vault / "log" / "2026-11.txt").unlink()
        (vault / "scratch.txt").write_text("not a note: no glob covers it\n", encoding="utf-8")
        wait_for(lambda: sum(e.get("added", 0) for e in _events(out)[2:]) >= 1
                 and sum(e.get("deleted", 0) for e in _events(out)[2:]) >= 1)
        proc.send_signal(2)
        assert proc.wait(timeout=10) == 0
    with Knotwork.open(vault, db=db) as kw:
        paths = set(kw.store.reader.document_index(kw.settings.scope))
    assert paths == {"services/Traefik.md", "services/Grafana.md", "hosts/kota.md",
                     "people/Alice.md", "log/2026-12.txt"}


def test_a_changed_ignore_file_makes_the_watcher_sync_the_whole_vault(tmp_path: Path) -> None:
    import watchfiles

    from knotwork.sync.watch import VaultWatcher

    with Knotwork.open(tmp_path, db=str(tmp_path / "s.db"), embedder="none") as kw:
        w = kw.watcher()  # as ``knotwork watch`` builds it
    assert isinstance(w, VaultWatcher)
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    assert w._paths({(watchfiles.Change.modified, str(tmp_path / "a.md"))}) == ["a.md"]
    (tmp_path / ".knotworkignore").write_text("drafts\n", encoding="utf-8")
    # which notes it now leaves out (or lets in) only a full sync can tell
    assert w._paths({(watchfiles.Change.added, str(tmp_path / ".knotworkignore")),
                     (watchfiles.Change.modified, str(tmp_path / "a.md"))}) is None


def test_the_watcher_ignores_the_folders_a_sync_ignores_inside_the_vault_only(
        tmp_path: Path) -> None:
    import watchfiles

    vault = tmp_path / "node_modules" / "notes"  # a vault under a folder of an ignored name
    vault.mkdir(parents=True)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        w = kw.watcher()
    from knotwork.sync.watch import _relevant_under

    relevant = _relevant_under(w.root, w.ignored_dirs)
    modified = watchfiles.Change.modified
    assert relevant(modified, str(w.root / "a.md"))
    assert relevant(modified, str(w.root / "deep" / "b.md"))
    for folder in (".venv", "__pycache__", ".git", "node_modules"):  # what sync skips
        assert not relevant(modified, str(w.root / folder / "c.md")), folder
        assert not relevant(modified, str(w.root / "deep" / folder / "c.md")), folder


def _live(db: Path, path: str) -> set[str]:
    """The values of the live facts a note's document holds."""
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute(
            "SELECT f.value FROM facts f JOIN documents d ON d.id = f.document_id"
            " WHERE d.path = ? AND d.deleted_at IS NULL AND f.retracted_at IS NULL", (path,))}
    finally:
        con.close()


def test_an_edit_to_a_symlinked_notes_target_resyncs_the_link(vault: Path,
                                                              tmp_path: Path) -> None:
    (vault / "shared").mkdir()
    policy = vault / "shared" / "policy.txt"  # no glob covers it: only the link is a note
    policy.write_text("# Policy\n\nPatch on Fridays.\n", encoding="utf-8")
    (vault / "notes").mkdir()
    os.symlink("../shared/policy.txt", vault / "notes" / "policy.md")
    box = vault / "shared" / "box.txt"  # (a link to a note would be that note, not another)
    box.write_text("---\ntype: host\n---\n# box\n", encoding="utf-8")
    os.symlink("../shared/box.txt", vault / "hosts" / "kota-link.md")
    os.symlink("../hosts/kota-link.md", vault / "notes" / "again.md")  # a link to a link
    os.symlink("kota.md", vault / "hosts" / "alias.md")  # the note kota.md itself
    db, out = tmp_path / "s.db", tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", str(db), "watch", "--vault", str(vault), "--json")
    with open(out, "w", encoding="utf-8") as stdout, \
            running(cmd, tmp_path / "watch.log", stdout=stdout) as proc:
        wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
        assert _events(out)[0]["added"] == 7  # the four notes and three links (not alias.md)
        links = ("hosts/kota-link.md", "notes/again.md")

        box.write_text("---\nos: alpine\n---\n# box\n", encoding="utf-8")
        wait_for(lambda: all("alpine" in _live(db, p) for p in links))
        policy.write_text("# Policy\n\nPatch on Fridays, see [[Alice]].\n", encoding="utf-8")
        wait_for(lambda: "Alice" in _live(db, "notes/policy.md"))
        box.unlink()  # the links break: gone, as a full sync has it
        wait_for(lambda: not any(_live(db, p) for p in links))
        proc.send_signal(2)
        assert proc.wait(timeout=10) == 0
    events = [e for e in _events(out)[2:] if e["event"] == "applied"]
    assert sum(e["updated"] for e in events) >= 3  # the two links to box.txt, policy.md
    reasons = {(i["path"], i["reason"]) for e in events for i in e["errors"]}
    assert reasons == {(p, "cannot read: broken symlink") for p in links}
    assert "Traceback" not in (tmp_path / "watch.log").read_text(encoding="utf-8")


def test_a_link_to_a_retargeted_link_is_resynced_with_it(vault: Path, tmp_path: Path) -> None:
    (vault / "shared").mkdir()  # targets no glob covers: each link is a note of its own
    (vault / "shared" / "host.txt").write_text("---\ntype: host\n---\n# h\n", encoding="utf-8")
    (vault / "shared" / "svc.txt").write_text("---\ntype: service\nruns_on: \"[[kota]]\"\n"
                                             "---\n# s\n", encoding="utf-8")
    os.symlink("../shared/host.txt", vault / "hosts" / "kota-link.md")
    os.symlink("hosts/kota-link.md", vault / "again.md")
    db, out = tmp_path / "s.db", tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", str(db), "watch", "--vault", str(vault), "--json")
    with open(out, "w", encoding="utf-8") as stdout, \
            running(cmd, tmp_path / "watch.log", stdout=stdout) as proc:
        wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
        assert "host" in _live(db, "again.md")
        # no event names again.md: it changes because the link it passes through did
        (vault / "hosts" / "kota-link.md").unlink()
        os.symlink("../shared/svc.txt", vault / "hosts" / "kota-link.md")
        wait_for(lambda: _live(db, "again.md") >= {"service", "kota"}
                 and "host" not in _live(db, "again.md"))
        proc.send_signal(2)
        assert proc.wait(timeout=10) == 0
    assert "Traceback" not in (tmp_path / "watch.log").read_text(encoding="utf-8")


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_watch_started_by_a_script_in_the_background_still_stops_on_sigint(
        vault: Path, tmp_path: Path) -> None:
    """A shell script's ``knotwork watch … &`` inherits SIGINT ignored; ``kill -INT`` must
    still stop it cleanly (exit 0, the store closed), as uvicorn-style servers do."""
    out = tmp_path / "watch.jsonl"
    cmd = knotwork_cmd("--db", str(tmp_path / "s.db"), "watch", "--vault", str(vault), "--json")
    with open(out, "w", encoding="utf-8") as stdout, \
            open(tmp_path / "watch.log", "w", encoding="utf-8") as errlog, \
            subprocess.Popen(cmd, stdout=stdout, stderr=errlog, stdin=subprocess.DEVNULL,
                             env=child_env(), text=True, preexec_fn=_ignore_sigint) as proc:
        try:
            wait_for(lambda: any(e["event"] == "watching" for e in _events(out)), timeout=20)
            proc.send_signal(2)
            assert proc.wait(timeout=10) == 0, (tmp_path / "watch.log").read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
