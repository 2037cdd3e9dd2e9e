"""``knotwork migrate``: a store copied between backends exactly, history and all, verified
by counts and a checksum; copied back, the checksum is the one it started with."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app
from knotwork.core import migrate_store
from knotwork.errors import StoreError
from knotwork.store import open_store
from knotwork.store.migrate import TABLES, summarize

from ..store_contract import pg

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def _store_with_history(tmp_path: Path) -> str:
    """A SQLite store with edits, a delete, an agent's fact and its retraction, vectors."""
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    db = str(tmp_path / "a.db")
    with Knotwork.open(vault, db=db, embedder="hash") as kw:
        kw.ingest()
        note = next(vault.rglob("Traefik.md"))
        note.write_text(note.read_text() + "\nowner:: [[Zanzibar Team]]\n")
        kw.ingest()
        next(vault.rglob("*.md")).unlink()
        kw.ingest()
    return db


def test_a_store_goes_to_postgresql_and_back_with_the_same_checksum(tmp_path: Path) -> None:
    db = _store_with_history(tmp_path)
    with Knotwork.open(None, db=db, embedder="hash") as kw:
        secret = kw.create_token("agent", scopes=["default"], read_only=True).secret
    url = pg.fresh_url()
    try:
        before, after = migrate_store(db, url)
        assert before == after and before.counts["versions"] > before.counts["documents"]
        assert before.counts["tokens"] == 1
        assert before.counts["facts"] and before.counts["embeddings"]
        assert set(before.counts) == set(TABLES)
        back = str(tmp_path / "back.db")
        again, _ = migrate_store(url, back)
        assert again.checksum == before.checksum
        # the copy answers as the original does (the same hits; ranks within a few per
        # cent, as the two tokenizers count a host name's words apart)
        with Knotwork.open(None, db=db, embedder="hash") as a, \
                Knotwork.open(None, db=url, embedder="hash") as b:
            for q in ("traefik", "kestrel queue"):
                assert ({h.chunk_id for h in a.search(q, k=3)}
                        == {h.chunk_id for h in b.search(q, k=3)})
                assert ({e.label for e in a.context(q).entities}
                        == {e.label for e in b.context(q).entities})
            assert replace(a.stats(), store="") == replace(b.stats(), store="")
            # an API token goes with the store, still read-only and still its secret's
            assert secret and (who := b.authenticate(secret)) is not None
            assert who.read_only and who.scopes == ("default",)
        # and it takes new writes: ids continue past the copied ones
        s = open_store(url)
        try:
            from ..store_contract.drafts import doc
            with s.write(actor="test") as w:
                w.apply("default", doc("new.md", []))
            assert summarize(s).counts["documents"] == before.counts["documents"] + 1
        finally:
            s.close()
    finally:
        pg.drop(url)


def test_migrate_refuses_a_store_that_is_not_empty(tmp_path: Path) -> None:
    db = _store_with_history(tmp_path)
    url = pg.fresh_url()
    try:
        migrate_store(db, url)
        with pytest.raises(StoreError, match="not empty"):
            migrate_store(db, url)
    finally:
        pg.drop(url)


def test_the_cli_prints_counts_and_a_verified_checksum(tmp_path: Path) -> None:
    db = _store_with_history(tmp_path)
    url = pg.fresh_url()
    try:
        got = CliRunner().invoke(app, ["migrate", "--from", db, "--to", url, "--json"])
        assert got.exit_code == 0, got.output
        report = json.loads(got.output)
        assert report["verified"] is True and report["counts"]["facts"] > 0
        bad = CliRunner().invoke(app, ["migrate", "--from", db, "--to", url])
        assert bad.exit_code == 1 and "not empty" in bad.output
    finally:
        pg.drop(url)
