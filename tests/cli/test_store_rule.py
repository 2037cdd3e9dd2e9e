"""One store per vault, found as git finds .git; nothing but a successful sync makes one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"
runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, list(args))
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout + res.stderr


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding a copy of the example vault, as the current folder."""
    monkeypatch.delenv("KNOTWORK_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(VAULT, tmp_path / "v")
    return tmp_path


def test_a_mistyped_ingest_leaves_no_store_and_reads_then_exit_3(here: Path) -> None:
    code, out = cli("ingest", str(here / "nonexistent" / "dir"))
    assert code == 1 and "not a folder or file" in out
    assert not (here / ".knotwork").exists()
    code, out = cli("context", "traefik")
    assert code == 3 and "no store in" in out
    assert not (here / ".knotwork").exists()


def test_a_failed_first_sync_leaves_no_store(here: Path) -> None:
    # one note of a vault no sync has read yet: refused after the store was opened
    code, out = cli("ingest", str(here / "v" / "index.md"))
    assert code == 2 and "ingest the folder that holds it first" in out
    assert not (here / ".knotwork").exists()


def test_the_quick_start_store_is_the_one_the_vault_finds(here: Path) -> None:
    assert cli("ingest", "v", "-q", "--no-embed")[0] == 0
    assert (here / ".knotwork" / "store.db").is_file()
    with Knotwork.open(here / "v") as kw:  # mcp, serve and watch open the vault so
        assert Path(kw.store.path) == here / ".knotwork" / "store.db"
    assert not (here / "v" / ".knotwork").exists()


def test_a_read_inside_the_vault_finds_the_store_above(here: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("ingest", "v", "-q", "--no-embed")[0] == 0
    monkeypatch.chdir(here / "v" / "services")
    code, out = cli("context", "traefik", "--max-tokens", "200")
    assert code == 0 and "## Traefik" in out
    code, out = cli("stats")
    assert code == 0
    assert f"store: {here / '.knotwork' / 'store.db'}" in out
    assert f"vault: {here / 'v'}" in out


def test_ingest_uses_the_store_the_vault_already_has(here: Path) -> None:
    with Knotwork.open(here / "v", embedder="none") as kw:  # as `knotwork mcp --vault v`
        kw.ingest()
    assert (here / "v" / ".knotwork" / "store.db").is_file()
    code, out = cli("ingest", "v", "--no-embed")
    assert code == 0 and "unchanged 20" in out
    assert not (here / ".knotwork").exists()  # no second store


def test_a_store_above_that_holds_another_vault_is_passed_over(here: Path) -> None:
    other = here / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n")
    with Knotwork.open(other, db=str(here / ".knotwork" / "store.db"), embedder="none") as kw:
        kw.ingest()
    with Knotwork.open(here / "v", embedder="none") as kw:
        assert Path(kw.store.path) == here / "v" / ".knotwork" / "store.db"
