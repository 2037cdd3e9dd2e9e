"""A scoped caller's add_context writes its own scopes only, deletions included."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.errors import Forbidden

from ..sync.test_add_context import ADR_4


def _docs(kw: Knotwork, scope: str) -> int:
    return sum(1 for _ in kw.store.reader.document_index(scope))


def test_add_context_refuses_a_record_or_a_move_outside_the_scopes(tmp_path: Path) -> None:
    adr = tmp_path / "vault" / "adr" / "0004-use-postgres.md"
    adr.parent.mkdir(parents=True)
    adr.write_text(ADR_4, encoding="utf-8")
    with Knotwork.open(tmp_path / "vault", db=str(tmp_path / "s.db"), embedder="none") as kw:
        with pytest.raises(Forbidden) as refused:
            kw.add_context("adr", namespace="p", vault_only=True, scopes=["p__project_docs"])
        assert refused.value.scope == "p__project_decisions"
        assert _docs(kw, "p__project_decisions") == 0  # nothing written
        kw.add_context("adr", namespace="p", vault_only=True,
                       scopes=["p__project_decisions"])
        assert _docs(kw, "p__project_decisions") == 1
        # read as a note now, the ADR would leave p__project_decisions: a write there too
        with pytest.raises(Forbidden):
            kw.add_context("adr", namespace="p", type="note", vault_only=True,
                           scopes=["p__project_docs"])
        assert _docs(kw, "p__project_decisions") == 1 and _docs(kw, "p__project_docs") == 0
        kw.add_context("adr", namespace="p", type="note", vault_only=True,
                       scopes=["p__project_docs", "p__project_decisions"])
        assert _docs(kw, "p__project_decisions") == 0 and _docs(kw, "p__project_docs") == 1
