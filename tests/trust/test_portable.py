"""Export → import → the same state: checksums of the facts and the events agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app
from knotwork.errors import Conflict, InvalidQuery
from knotwork.trust.portable import store_checksums

NOTES = {"Traefik.md": "---\ntype: service\nruns_on: \"[[kota]]\"\n---\n# Traefik\n\nProxy.\n",
         "kota.md": "# kota\n\nA host. Traefik runs here.\n"}


def test_export_import_round_trip(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for rel, text in NOTES.items():
        (vault / rel).write_text(text, encoding="utf-8")
    db = str(tmp_path / "a.db")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
        (vault / "Traefik.md").write_text(NOTES["Traefik.md"] + "Owner: [[Dana]].\n",
                                          encoding="utf-8")
        kw.ingest()  # an edit: a retraction and a new version in the history
        (vault / "kota.md").unlink()
        kw.ingest()  # a tombstone
        fact = kw.assert_fact("Traefik", "color", "blue")
        kw.review("reject", [fact.id], reason="no")
        kw.create_token("ci", scopes=["default"], read_only=True)
        kw.compact(vacuum=False)  # past versions packed: exported whole all the same
        before = store_checksums(kw.store.reader)
        ctx = kw.context("traefik", max_tokens=0).as_dict()
        history = kw.history("Traefik").as_dict()
    runner = CliRunner()
    out = tmp_path / "store.jsonl"
    r = runner.invoke(app, ["--db", db, "export", "--jsonl", "-o", str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["checksum"] == before
    r = runner.invoke(app, ["--db", str(tmp_path / "b.db"), "import", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["checksum"] == before
    with Knotwork.open(None, db=str(tmp_path / "b.db"), embedder="none") as copy:
        assert store_checksums(copy.store.reader) == before
        assert copy.context("traefik", max_tokens=0).as_dict() == ctx
        assert copy.history("Traefik").as_dict() == history
        assert [t.name for t in copy.tokens()] == ["ci"]
        with pytest.raises(Conflict):  # only into an empty store
            copy.import_jsonl(lines)


def test_a_changed_or_cut_export_is_refused(tmp_path: Path) -> None:
    with Knotwork.open(None, db=str(tmp_path / "a.db"), embedder="none") as kw:
        kw.assert_fact("X", "p", "v")
        lines = list(kw.export_jsonl())
    with Knotwork.open(None, db=str(tmp_path / "b.db"), embedder="none") as other:
        with pytest.raises(InvalidQuery, match="checksum"):
            other.import_jsonl(lines[:-1])
        tampered = [line.replace('"v"', '"w"') for line in lines]
        with pytest.raises(InvalidQuery, match="do not match"):
            other.import_jsonl(tampered)
        with pytest.raises(InvalidQuery, match="line 1"):
            other.import_jsonl(["{}"] + lines[1:])
        assert other.stats().facts == 0  # nothing was written
