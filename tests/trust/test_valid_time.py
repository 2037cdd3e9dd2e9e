"""Valid time from the notes, ``--valid-at``, and the current-truth rule, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app

NOTES = {
    "projects/Heliograph.md": """---
type: project
valid_from: 2024-01-01
---
# Heliograph

- [status:: alpha] [since:: 2024-01-01]
- [status:: beta] [since:: 2025-03-01]
- [owner:: [[Dana]]] [until:: 2025-06-01]
""",
    "decisions/ADR-1.md": """---
type: adr
date: 2024-02-01
status: accepted
---
# ADR-1: Use Traefik

We use [[Traefik]] at the edge.
""",
    "decisions/ADR-2.md": """---
type: adr
date: 2025-06-01
status: accepted
supersedes: "[[ADR-1]]"
---
# ADR-2: Use Caddy

We use [[Caddy]] at the edge.
""",
}


@pytest.fixture
def kw(tmp_path: Path):  # type: ignore[no-untyped-def]
    for rel, text in NOTES.items():
        (tmp_path / "v" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "v" / rel).write_text(text, encoding="utf-8")
    with Knotwork.open(tmp_path / "v", db=str(tmp_path / "s.db"), embedder="none") as k:
        k.ingest()
        yield k


def _values(rows, pred: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.value_label or f.value for f in rows if f.predicate == pred}


def test_since_until_and_frontmatter_give_valid_time(kw: Knotwork) -> None:
    rows = kw.facts("Heliograph")
    status = {f.value: (f.valid_from, f.valid_to) for f in rows if f.predicate == "status"}
    # beta started later: it closes alpha's valid time (the rule, with its reason)
    assert status == {"alpha": ("2024-01-01", "2025-03-01"), "beta": ("2025-03-01", None)}
    [alpha] = [f for f in rows if f.value == "alpha"]
    assert alpha.valid_to_reason and "beta" in alpha.valid_to_reason
    assert "valid_to_reason" in alpha.as_dict()
    assert _values(kw.facts("Heliograph", valid_at="2024-06-01"), "status") == {"alpha"}
    assert _values(kw.facts("Heliograph", valid_at="2025-04-01"), "status") == {"beta"}
    assert _values(kw.facts("Heliograph", valid_at="2025-05-01"), "owner") == {"Dana"}
    assert _values(kw.facts("Heliograph", valid_at="2025-07-01"), "owner") == set()
    # before the note's valid_from nothing it states held; what names and dates it does,
    # and where it is (its folder's page: ``part_of``)
    early = kw.facts("Heliograph", valid_at="2023-01-01")
    assert {f.predicate for f in early} == {"type", "valid_from", "since", "until", "part_of"}


def test_a_superseded_decision_is_closed_at_its_successors_date(kw: Knotwork) -> None:
    rows = kw.facts("ADR-1")
    uses = [f for f in rows if f.predicate == "links_to" or f.value_label == "Traefik"]
    assert uses and all(f.valid_to == "2025-06-01" for f in uses)
    assert all("superseded" in (f.valid_to_reason or "") for f in uses)
    assert _values(kw.facts("ADR-1", valid_at="2025-01-01"), "status") == {"accepted"}
    # after it, what it decided no longer holds; that it is superseded does, and so does
    # what describes the record itself
    later = kw.facts("ADR-1", valid_at="2025-07-01")
    assert _values(later, "status") == {"superseded"}
    assert _values(later, "title") and _values(later, "date") == {"2024-02-01"}
    assert not [f for f in later if f.predicate == "links_to"]
    assert _values(kw.facts("ADR-2", valid_at="2025-07-01"), "status") == {"accepted"}


def test_superseded_by_in_the_old_record_closes_it_at_the_successors_own_date(
        tmp_path: Path) -> None:
    """"Superseded by" written in the old record carries the old record's date; the
    supersession starts at the successor's date, and nothing gets an empty interval."""
    notes = {
        "decisions/0021-multi-cluster.md": "# 21. Multi-cluster\n\nDate: 2021-05-11\n\n"
        "## Status\n\nSuperseded by [36. Multi-cluster](0036-multi-cluster.md)\n\n"
        "## Context\n\nOne cluster.\n\n## Decision\n\nWe run [[Kops]].\n",
        "decisions/0036-multi-cluster.md": "# 36. Multi-cluster\n\nDate: 2022-09-16\n\n"
        "## Status\n\nAccepted\n\n## Context\n\nMany.\n\n## Decision\n\nWe run [[EKS]].\n",
    }
    for rel, text in notes.items():
        (tmp_path / "v" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "v" / rel).write_text(text, encoding="utf-8")
    with Knotwork.open(tmp_path / "v", db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        rows = kw.facts("ADR-0021")
        assert all(f.valid_to is None or f.valid_from is None or f.valid_from < f.valid_to
                   for f in rows), [(f.predicate, f.valid_from, f.valid_to) for f in rows]
        closed = [f for f in rows if f.valid_to is not None]
        assert closed and {f.valid_to for f in closed} == {"2022-09-16"}
        assert _values(kw.facts("ADR-0021", valid_at="2022-01-01"), "links_to") == {"Kops"}
        then = kw.facts("ADR-0021", valid_at="2023-01-01")
        assert _values(then, "status") == {"superseded"} and not _values(then, "links_to")
        assert _values(then, "number") == {"ADR-0021"}


def test_context_valid_at_is_the_same_rule(kw: Knotwork) -> None:
    def facts_of(ctx, label: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
        [e] = [e for e in ctx.as_dict()["entities"] if e["label"] == label]
        return {f["predicate"] + "=" + str(f.get("value_label") or f["value"]): f
                for f in e["facts"]}

    now = facts_of(kw.context("Heliograph", max_tokens=0), "Heliograph")
    assert now["status=alpha"]["valid_to"] == "2025-03-01"
    assert "beta" in now["status=alpha"]["valid_to_reason"]
    then = facts_of(kw.context("Heliograph", valid_at="2024-06-01", max_tokens=0),
                    "Heliograph")
    assert "status=alpha" in then and "status=beta" not in then
    later = facts_of(kw.context("Heliograph", valid_at="2025-04-01", max_tokens=0),
                     "Heliograph")
    assert "status=beta" in later and "status=alpha" not in later


def test_cli_valid_at_and_a_bad_date(kw: Knotwork, tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "s.db")
    r = runner.invoke(app, ["--db", db, "facts", "Heliograph", "--valid-at", "2024-06-01",
                            "--json"])
    assert r.exit_code == 0, r.output
    assert {f["value"] for f in json.loads(r.output) if f["predicate"] == "status"} == {"alpha"}
    r = runner.invoke(app, ["--db", db, "context", "Heliograph", "--valid-at", "yesterday"])
    assert r.exit_code == 2
    bad = tmp_path / "v" / "projects" / "Bad.md"
    bad.write_text("---\nvalid_from: soon\n---\n# Bad\n", encoding="utf-8")
    report = kw.ingest()
    assert any(e.line == 2 and "not an ISO date" in e.reason for e in report.errors)


def test_a_note_updated_later_closes_the_older_statement(tmp_path: Path) -> None:
    notes = {"plan.md": "---\nupdated: 2025-01-10\n---\n# Plan\n\n"
                        "### TASK-ALR-001: Define alerts\n\nstatus:: todo\n",
             "review.md": "---\nupdated: 2025-06-20\n---\n# Review\n\n"
                          "### TASK-ALR-001: Define alerts\n\nstatus:: done\n"}
    for rel, text in notes.items():
        (tmp_path / "v").mkdir(exist_ok=True)
        (tmp_path / "v" / rel).write_text(text, encoding="utf-8")
    with Knotwork.open(tmp_path / "v", db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        status = {f.value: f for f in kw.facts("TASK-ALR-001") if f.predicate == "status"}
        assert set(status) == {"todo", "done"}
        assert status["todo"].valid_to == "2025-06-20"
        assert "updated 2025-06-20" in (status["todo"].valid_to_reason or "")
        assert status["done"].valid_to is None
        assert _values(kw.facts("TASK-ALR-001", valid_at="2025-07-01"), "status") == {"done"}


def test_as_of_closes_by_the_supersessions_known_then(tmp_path: Path) -> None:
    """``--as-of t`` applies the current-truth rule to what the store held at ``t``: a
    successor recorded after ``t`` closes nothing in an answer as of ``t``."""
    from datetime import UTC, datetime

    from knotwork.store import record_time

    vault = tmp_path / "v"
    (vault / "decisions").mkdir(parents=True)
    (vault / "decisions/ADR-1.md").write_text(NOTES["decisions/ADR-1.md"], encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        kw.ingest()
        before = record_time(datetime.now(UTC))
        (vault / "decisions/ADR-2.md").write_text(NOTES["decisions/ADR-2.md"],
                                                  encoding="utf-8")
        kw.ingest()
        # today: closed at the successor's date
        assert {f.valid_to for f in kw.facts("ADR-1") if f.predicate == "uses"} == {
            "2025-06-01"}
        # as of before the successor was recorded: open, as the store then said
        then = kw.facts("ADR-1", as_of=before)
        assert {f.valid_to for f in then if f.predicate == "uses"} == {None}
        assert _values(kw.facts("ADR-1", as_of=before, valid_at="2025-07-01"),
                       "status") == {"accepted"}
        view = kw.entity("ADR-1", as_of=before)
        assert {f.valid_to for f in view.facts if f.predicate == "uses"} == {None}
        ctx = kw.context("ADR-1 Traefik", as_of=before, max_tokens=0).as_dict()
        [adr] = [e for e in ctx["entities"] if e["label"].startswith("ADR-1")]
        assert [f for f in adr["facts"] if f["predicate"] == "uses"]
        assert all(f.get("valid_to") is None for f in adr["facts"]
                   if f["predicate"] == "uses")
