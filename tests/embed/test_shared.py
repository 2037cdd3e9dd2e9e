"""One MiniLM a process, shared by every open store; the manifest check still holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.embed import shared
from knotwork.errors import ConfigError


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    return root


def test_two_stores_share_one_minilm_and_hash_is_not_shared(tmp_path: Path) -> None:
    one = Knotwork.open(_vault(tmp_path / "v1"), db=str(tmp_path / "1.db"), embedder="minilm")
    two = Knotwork.open(_vault(tmp_path / "v2"), db=str(tmp_path / "2.db"),
                        embedder="minilm-l6-v2-int8")
    try:
        assert one.embedder() is two.embedder()  # the session (~280 MB) is loaded once
    finally:
        one.close()
        two.close()
    assert shared.shared_embedder("hash") is not shared.shared_embedder("hash")


def test_a_shared_embedder_still_refuses_another_models_vectors(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest(embed=True)
    with (Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="minilm") as kw,
          pytest.raises(ConfigError, match="vectors were made by hash")):
        kw.embed()
