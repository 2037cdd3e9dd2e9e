"""Which model a store's vectors come from: new stores get ``minilm-q8``; a store embedded
before keeps its model (``auto``); another model is refused until re-embedded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import ConfigError

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


@pytest.fixture
def vault(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
          monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("KNOTWORK_EMBEDDER", raising=False)  # the real default: auto
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    shutil.copytree(VAULT, tmp_path / "v")
    return tmp_path / "v"


def _stamp(kw: Knotwork) -> str:
    return str(json.loads(kw.store.reader.meta("embedder") or "{}").get("name"))


def test_a_new_store_is_embedded_with_the_int8_model(vault: Path, tmp_path: Path) -> None:
    with Knotwork.open(vault, db=str(tmp_path / "new.db")) as kw:
        kw.ingest()
        assert kw.embedding_status() == "complete"
        assert _stamp(kw) == "minilm-l6-v2-q8"
        assert kw.stats().embedder == "minilm-q8"
        top = kw.search("who is responsible for alerting", mode="vector", k=3)
        assert top[0].path == "projects/FEAT-alerting.md"


def test_an_older_store_keeps_its_model_until_re_embedded(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "old.db")
    with Knotwork.open(vault, db=db, embedder="minilm") as kw:  # as before the default moved
        kw.ingest()
        assert _stamp(kw) == "minilm-l6-v2-int8"
    with Knotwork.open(vault, db=db) as kw:  # auto: the store's own model, never a mix
        assert kw.stats().embedder == "minilm"
        assert kw.search("who is responsible for alerting", mode="vector", k=3)[0].path \
            == "projects/FEAT-alerting.md"
        (vault / "notes-new.md").write_text("# Pager rota\n\nWho carries the pager.\n",
                                            encoding="utf-8")
        kw.ingest()  # new chunks are embedded with the store's model too
        assert kw.embedding_status() == "complete" and _stamp(kw) == "minilm-l6-v2-int8"
    with Knotwork.open(vault, db=db, embedder="minilm-q8") as kw:
        with pytest.raises(ConfigError) as err:
            kw.search("who is responsible for alerting", mode="vector")
        said = str(err.value)
        assert "minilm-l6-v2-int8" in said and "minilm-l6-v2-q8" in said
        assert "knotwork reindex --embeddings" in said and "KNOTWORK_EMBEDDER=auto" in said
        assert kw.search("alerting", mode="bm25")  # text search is unaffected
        kw.reindex_embeddings()  # what the message says to run
        assert _stamp(kw) == "minilm-l6-v2-q8"
    with Knotwork.open(vault, db=db) as kw:  # auto now follows the re-embedded store
        assert kw.stats().embedder == "minilm-q8"
        assert kw.search("who is responsible for alerting", mode="vector", k=3)[0].path \
            == "projects/FEAT-alerting.md"
