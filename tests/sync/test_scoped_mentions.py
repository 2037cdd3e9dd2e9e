"""A note's prose mentions the notes of its own scope only: another scope's titles never
show in its facts, and a name gone from the scope retracts its mentions there though
another scope's note keeps the name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knotwork import Knotwork

from ..store_contract import pg

ALPHA = {
    "Oncall.md": "# Oncall\n\nWho answers the pager. The Kestrel Queue runs on Data.\n",
    "Kestrel.md": "# Kestrel\n\nA message broker.\n",
    "Runbook.md": "# Runbook\n\nCall the Escalation desk, then see Oncall.\n",
}
BETA = {
    "Pager.md": "# Pager\n\nThe pager.\n",
    "Kestrel Queue.md": "# Kestrel Queue\n\nThe queue of Kestrel.\n",
    "Data.md": "# Data\n\nAll of it.\n",
    "Escalation.md": "# Escalation\n\nWho to call.\n",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """A fresh store of the backend under test, by a name (a file or a schema)."""
    made: list[str] = []

    def url(name: str) -> str:
        made.append(str(tmp_path / name) if request.param == "sqlite" else pg.fresh_url())
        return made[-1]

    yield url
    for u in made:
        if u.startswith("postgresql://"):
            pg.drop(u)


def _vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _facts(kw: Knotwork) -> list[tuple[str, str, str]]:
    return sorted((f.subject_label, f.predicate, f.value_label or f.value)
                  for f in kw.store.reader.live_facts(scopes=["alpha"]))


def _shape(ctx: dict) -> object:  # type: ignore[type-arg]
    """What an answer says, without ids and times."""
    return ({k: v for k, v in ctx["summary"].items() if k != "tokens"},
            sorted((e["label"], e["relevance"], round(e["score"], 4),
                    sorted((f["predicate"], str(f.get("value_label") or f["value"]))
                           for f in e["facts"]),
                    sorted((f["subject_label"], f["predicate"]) for f in e.get("incoming", [])))
                   for e in ctx["entities"]))


def _mentioned(kw: Knotwork, ref: str) -> set[str]:
    return {f.value_label or f.value for f in kw.facts(ref, scopes=["alpha"])
            if f.predicate == "mentions"}


def test_a_scopes_mentions_are_those_of_a_store_of_that_scope_alone(
        tmp_path: Path, db: Callable[[str], str]) -> None:
    alpha = _vault(tmp_path / "alpha", ALPHA)
    beta = _vault(tmp_path / "beta", BETA)
    both_url, alone_url = db("both.db"), db("alone.db")
    with Knotwork.open(beta, db=both_url, embedder="none", scope="beta") as kw:
        kw.ingest()
    with Knotwork.open(alpha, db=both_url, embedder="none", scope="alpha") as both, \
            Knotwork.open(alpha, db=alone_url, embedder="none", scope="alpha") as alone:
        both.ingest()
        alone.ingest()
        # "Kestrel Queue" (beta's) is no longer match of alpha's "Kestrel"; beta's
        # "Pager", "Data" and "Escalation" are no names in alpha
        assert _mentioned(both, "Oncall") == {"Kestrel"}
        assert _mentioned(both, "Runbook") == {"Oncall"}
        assert _facts(both) == _facts(alone)
        for q in ("oncall", "who answers the pager", "kestrel queue", "escalation desk"):
            mine = both.context(q, max_tokens=0, scopes=["alpha"]).as_dict()
            ref = alone.context(q, max_tokens=0, scopes=["alpha"]).as_dict()
            assert _shape(mine) == _shape(ref), q
        before = _facts(both)
    # beta taking a name alpha's prose uses ("Oncall") changes nothing of alpha's
    with Knotwork.open(beta, db=both_url, embedder="none", scope="beta") as kw:
        (beta / "Oncall.md").write_text("# Oncall\n\nBeta's own.\n", encoding="utf-8")
        kw.ingest()
        assert _facts(kw) == before


@pytest.mark.parametrize("workers", [1, 2])
def test_a_name_gone_from_a_scope_retracts_its_mentions_there(
        tmp_path: Path, db: Callable[[str], str], workers: int) -> None:
    """alpha's "Pager" deleted while beta's stays: alpha's mentions of it go (as they
    would in a store of alpha alone), and come back with the note. With two workers,
    enough notes mention it that the pass runs in worker processes."""
    many = 220 if workers > 1 else 1
    alpha = _vault(tmp_path / "alpha", {
        "Pager.md": "# Pager\n\nThe device.\n",
        **{f"Oncall {i}.md": f"# Oncall {i}\n\nWho answers the pager.\n"
           for i in range(many)}})
    beta = _vault(tmp_path / "beta", {"Pager.md": "# Pager\n\nBeta's pager.\n"})
    url = db("s.db")
    with Knotwork.open(alpha, db=url, embedder="none", scope="alpha",
                       workers=workers) as a, \
            Knotwork.open(beta, db=url, embedder="none", scope="beta", workers=workers) as b:
        a.ingest()
        assert _mentioned(a, "Oncall 0") == {"Pager"}
        b.ingest()
        assert _mentioned(a, "Oncall 0") == {"Pager"}
        (alpha / "Pager.md").unlink()
        a.ingest()
        for i in (0, many - 1):
            assert _mentioned(a, f"Oncall {i}") == set(), i
        assert not [f for f in a.store.reader.live_facts(scopes=["alpha"])
                    if f.predicate == "mentions"]
        (alpha / "Pager.md").write_text("# Pager\n\nBack.\n", encoding="utf-8")
        a.ingest()
        for i in (0, many - 1):
            assert _mentioned(a, f"Oncall {i}") == {"Pager"}, i
        # beta's note going leaves alpha's mentions of alpha's own note
        (beta / "Pager.md").unlink()
        b.ingest()
        assert _mentioned(a, "Oncall 0") == {"Pager"}
