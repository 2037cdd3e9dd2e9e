"""``find`` (entities by their live facts) and ``recent_changes`` through the facade and
the CLI (Typer's runner): a folder of ADRs, a vault of notes, edits and deletes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app
from knotwork.errors import InvalidQuery

runner = CliRunner()


def adr(n: int, title: str, status: str, extra: str = "") -> str:
    return (f"# {n}. {title}\n\nDate: 2024-0{n}-01\n\n## Status\n\n{status}\n\n"
            f"## Context\n\nWe need {title.lower()}.\n\n## Decision\n\nWe will.\n{extra}")


@pytest.fixture
def adrs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-use-kafka.md").write_text(adr(1, "Use Kafka", "Accepted"))
    (folder / "0002-use-redis.md").write_text(adr(2, "Use Redis", "Proposed"))
    (folder / "0003-use-mysql.md").write_text(adr(3, "Use MySQL", "Accepted"))
    (folder / "0004-use-postgres.md").write_text(
        adr(4, "Use Postgres", "Accepted", "\nThis decision supersedes ADR-0003.\n"))
    return tmp_path / "docs"


def cli(db: Path, *args: str) -> str:
    res = runner.invoke(app, ["--db", str(db), *args])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return res.stdout


def test_accepted_adrs_are_found_with_their_cited_status_and_follow_an_edit(
        tmp_path: Path, adrs: Path) -> None:
    db = tmp_path / "s.db"
    cli(db, "add-context", str(adrs), "--namespace", "proj", "-q")
    found = json.loads(cli(db, "find", "--where", "status=accepted", "--type", "adr",
                           "--json"))
    # ADR-0003 says accepted, but ADR-0004 supersedes it: its live status is superseded
    assert [e["label"] for e in found["entities"]] == ["1. Use Kafka", "4. Use Postgres"]
    assert found["truncated"] is False and found["where"] == [
        {"predicate": "status", "value": "accepted"}, {"predicate": "type", "value": "adr"}]
    kafka = found["entities"][0]
    assert kafka["types"] == ["adr"] and kafka["scope"] == "proj__project_decisions"
    [status] = [f for f in kafka["facts"] if f["predicate"] == "status"]
    src = status["source"]
    assert src["path"] == "adr/0001-use-kafka.md" and src["line_start"] == 7
    lines = (adrs / "adr" / "0001-use-kafka.md").read_text().splitlines()
    assert lines[src["line_start"] - 1] == "Accepted"
    assert {f["predicate"] for f in kafka["facts"]} == {"status", "type"}
    # the text form cites the line too
    text = cli(db, "find", "-w", "Status=ACCEPTED", "-t", "ADR")
    assert "1. Use Kafka (adr)" in text and "status = accepted  adr/0001-use-kafka.md:7" in text
    # an edit, synced again: the answer follows it
    (adrs / "adr" / "0001-use-kafka.md").write_text(adr(1, "Use Kafka", "Deprecated"))
    (adrs / "adr" / "0002-use-redis.md").write_text(adr(2, "Use Redis", "Accepted"))
    cli(db, "add-context", str(adrs), "--namespace", "proj", "-q")
    again = json.loads(cli(db, "find", "--where", "status=accepted", "--type", "adr",
                           "--json"))
    assert [e["label"] for e in again["entities"]] == ["2. Use Redis", "4. Use Postgres"]
    gone = json.loads(cli(db, "find", "--where", "status=deprecated", "--json"))
    assert [e["label"] for e in gone["entities"]] == ["1. Use Kafka"]
    superseded = json.loads(cli(db, "find", "--where", "status=superseded", "--json"))
    [mysql] = superseded["entities"]
    assert mysql["label"] == "3. Use MySQL"
    assert mysql["facts"][0]["source"]["path"] == "adr/0004-use-postgres.md"
    # what changed, newest first, by whom
    changes = json.loads(cli(db, "changes", "--since", "1h", "--json"))
    assert [(c["change"], c["path"]) for c in changes["changes"][:2]] == [
        ("edited", "adr/0002-use-redis.md"), ("edited", "adr/0001-use-kafka.md")]
    assert len(changes["changes"]) == 6 and changes["truncated"] is False
    assert all(c["actor"].startswith("cli:") for c in changes["changes"])


VAULT = {
    "people/alice-smith.md": "---\naliases: [Alice]\ntype: person\n---\n# Alice Smith\n",
    "services/api.md": "---\ntype: service\nowner: \"[[Alice]]\"\nstato: Attivo\n---\n# API\n",
    "services/db.md": "---\ntype: service\nowner: \"[[Bob]]\"\nstatus: attivo\n---\n# DB\n",
    "services/web.md": "---\ntype: service\nowner: Alice Smith\nstatus: Élevé\n---\n# Web\n",
}


@pytest.fixture
def kw(tmp_path: Path) -> Knotwork:
    vault = tmp_path / "vault"
    for rel, text in VAULT.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    k = Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none")
    k.ingest()
    return k


def labels(kw: Knotwork, *where: str, **opts: object) -> list[str]:
    return [e.label for e in kw.find(list(where), **opts).entities]  # type: ignore[arg-type]


def test_keys_are_normalised_as_ingest_stores_them_and_values_compared_without_case(
        kw: Knotwork) -> None:
    with kw:
        # "stato" (Italian) is stored as status; the value as written, without case
        assert labels(kw, "Status=ATTIVO") == ["API", "DB"]
        assert labels(kw, "Stato = attivo", type="service") == ["API", "DB"]
        assert labels(kw, "status=élevé") == ["Web"]  # beyond ASCII too
        assert labels(kw, "status") == ["API", "DB", "Web"]  # any value
        assert [e.label for e in kw.find("status=attivo").entities] == ["API", "DB"]
        assert labels(kw, "status=attivo", type="person") == []


def test_an_entity_value_is_found_by_any_of_its_names(kw: Knotwork) -> None:
    with kw:
        # owner: [[Alice]] reaches the note "Alice Smith" (its alias); a plain value
        # "Alice Smith" is a literal of that spelling
        assert labels(kw, "owner=[[Alice Smith]]") == ["API"]
        assert labels(kw, "owner=alice") == ["API"]
        assert labels(kw, "owner=Alice Smith") == ["API", "Web"]
        assert labels(kw, "owner=[[Bob]]") == ["DB"]
        [api] = kw.find(["owner=alice"]).entities
        [owner] = api.facts
        assert owner.value_type == "Entity" and owner.value_label == "Alice Smith"
        assert owner.source is not None and owner.source.supporting_text == 'owner: "[[Alice]]"'


def test_the_limit_cuts_and_says_so_and_bad_input_is_refused(kw: Knotwork) -> None:
    with kw:
        cut = kw.find([], type="service", limit=2)
        assert [e.label for e in cut.entities] == ["API", "DB"] and cut.truncated
        assert not kw.find([], type="service", limit=3).truncated
        for bad in ([], ["=x"], ["status="], ["!!=x"]):
            with pytest.raises(InvalidQuery):
                kw.find(bad)
        with pytest.raises(InvalidQuery):
            kw.find(["a=b"] * 21)
        with pytest.raises(InvalidQuery):
            kw.find(["status"], limit=501)
        assert kw.find(["status"], scopes=["nowhere"]).entities == ()


def test_recent_changes_lists_creates_edits_and_deletes_newest_first(kw: Knotwork) -> None:
    assert kw.vault is not None
    with kw:
        first = kw.recent_changes(since="1h")
        assert {c.change for c in first.changes} == {"created"} and len(first.changes) == 4
        (kw.vault / "services" / "db.md").write_text(VAULT["services/db.md"] + "More.\n")
        (kw.vault / "services" / "web.md").unlink()
        kw.ingest()
        kw.ingest()  # nothing changed: nothing listed
        now = kw.recent_changes(since="1h", limit=2)
        assert [(c.change, c.path) for c in now.changes] == [
            ("deleted", "services/web.md"), ("edited", "services/db.md")]
        assert now.truncated and now.changes[0].actor == kw.actor
        assert kw.recent_changes(since="2999-01-01").changes == ()
        with pytest.raises(InvalidQuery):
            kw.recent_changes(since="yesterday")
        with pytest.raises(InvalidQuery):
            kw.recent_changes(limit=0)
