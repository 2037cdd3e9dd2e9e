"""``knotwork add-context``: the JSON contract, dry runs, supersession and ownership."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork.cli.main import app

runner = CliRunner()

ADR_2 = """# 2. Use MySQL for the edge caches

Date: 2024-01-10

## Status

Accepted

## Context

We need a database for the edge caches.

## Decision

We will use MySQL.

## Consequences

- Ops must run MySQL.
"""

ADR_4 = """---
status: accepted
date: 2024-03-15
deciders: [Dana Whitfield, Marco Bellini]
---
# Use Postgres for the edge caches

## Context and Problem Statement

The edge caches moved to postgres because MySQL replication kept failing.

## Considered Options

* MySQL
* Postgres

## Decision Outcome

Chosen option: "Postgres", because replication works.

This decision supersedes [ADR-0002](0002-use-mysql.md).
"""


def run(db: Path, *args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["--db", str(db), *args])
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout


def facts(db: Path, ref: str, *extra: str) -> list[dict[str, object]]:
    code, out = run(db, "facts", ref, "--json", *extra)
    assert code == 0, out
    rows: list[dict[str, object]] = json.loads(out)
    return rows


def by(rows: list[dict[str, object]], predicate: str) -> list[dict[str, object]]:
    return [r for r in rows if r["predicate"] == predicate]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    adr = tmp_path / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0002-use-mysql.md").write_text(ADR_2)
    (adr / "0004-use-postgres.md").write_text(ADR_4)
    (tmp_path / "docs" / "notes.md").write_text("# Notes\n\nSee [[Postgres]].\n")
    return tmp_path / "docs"


def test_json_report_and_adr_facts_with_sources(tmp_path: Path, docs: Path) -> None:
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert list(report) == ["files", "records_added", "records_updated", "unchanged",
                            "warnings", "errors"]
    assert (report["files"], report["records_added"], report["errors"]) == (3, 3, [])
    rows = facts(db, "ADR-0004")
    values = {r["predicate"]: r["value"] for r in rows if r["value_type"] == "Literal"}
    assert values["status"] == "accepted" and values["date"] == "2024-03-15"
    assert values["chosen_option"] == "Postgres"
    assert {r["value"] for r in by(rows, "deciders")} == {"Dana Whitfield", "Marco Bellini"}

    sup = by(rows, "supersedes")
    assert len(sup) == 1 and sup[0]["value_type"] == "Entity"
    assert sup[0]["value_label"] == "2. Use MySQL for the edge caches"
    for r in rows:
        src = r["source"]
        assert isinstance(src, dict) and src["path"] == "adr/0004-use-postgres.md"
        assert isinstance(src["line_start"], int) and src["line_end"] >= src["line_start"]
    assert by(rows, "status")[0]["source"]["line_start"] == 2  # type: ignore[index]
    assert by(rows, "supersedes")[0]["source"]["line_start"] == 21  # type: ignore[index]
    # the aliases: ADR-NNNN and the title
    assert facts(db, "Use Postgres for the edge caches") == rows
    # the superseded ADR, whichever file says it
    old = facts(db, "ADR-0002")
    assert [r["value"] for r in by(old, "status")] == ["superseded"]
    assert [r["value_label"] for r in by(old, "superseded_by")] == [
        "Use Postgres for the edge caches"]
    code, out = run(db, "context", "ADR-0002", "--json")
    ctx = json.loads(out)["entities"][0]
    assert [f["value"] for f in ctx["facts"] if f["predicate"] == "status"] == ["superseded"]
    history = facts(db, "ADR-0002", "--history")
    assert sorted(r["value"] for r in by(history, "status")) == ["accepted", "superseded"]
    # scopes by category
    code, out = run(db, "--scope", "myapp__project_decisions", "context", "postgres",
                    "--json")
    assert code == 0 and json.loads(out)["entities"]


def test_dry_run_writes_nothing_and_counts_what_would_happen(tmp_path: Path,
                                                            docs: Path) -> None:
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    (docs / "adr" / "0002-use-mysql.md").write_text(ADR_2.replace("Accepted", "Deprecated"))
    (docs / "adr" / "ADR-0005-cache.md").write_text("# ADR-0005: Cache\n\nStatus: Proposed\n")
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--dry-run",
                    "--json")
    assert code == 0, out
    report = json.loads(out)
    assert (report["records_added"], report["records_updated"], report["unchanged"]) == (
        1, 1, 2)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert [r["value"] for r in by(facts(db, "ADR-0004"), "status")] == ["accepted"]
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    assert json.loads(out)["records_added"] == 1
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    assert json.loads(out)["unchanged"] == 4
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--force",
                    "--json")
    assert json.loads(out)["records_updated"] == 4


def test_an_edit_retracts_the_old_status_and_nothing_else(tmp_path: Path,
                                                         docs: Path) -> None:
    db = tmp_path / "s.db"
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    live = {r["id"]: r for r in facts(db, "ADR-0004")}
    f = docs / "adr" / "0004-use-postgres.md"
    f.write_text(ADR_4.replace("status: accepted", "status: deprecated"))
    code, out = run(db, "add-context", str(f), "--namespace", "myapp", "--json")
    assert json.loads(out)["records_updated"] == 1
    after = {r["id"]: r for r in facts(db, "ADR-0004")}
    gone = set(live) - set(after)
    assert [live[i]["value"] for i in gone] == ["accepted"]
    new = set(after) - set(live)
    assert [after[i]["value"] for i in new] == ["deprecated"]


def test_removing_the_sentence_or_the_file_undoes_supersession(tmp_path: Path,
                                                              docs: Path) -> None:
    db = tmp_path / "s.db"
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    f = docs / "adr" / "0004-use-postgres.md"
    f.write_text(ADR_4.replace("This decision supersedes [ADR-0002](0002-use-mysql.md).\n", ""))
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    old = facts(db, "ADR-0002")
    assert [r["value"] for r in by(old, "status")] == ["accepted"] and not by(
        old, "superseded_by")
    f.write_text(ADR_4)  # said again, then the file deleted
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    assert [r["value"] for r in by(facts(db, "ADR-0002"), "status")] == ["superseded"]
    f.unlink()
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    old = facts(db, "ADR-0002")
    assert [r["value"] for r in by(old, "status")] == ["accepted"] and not by(
        old, "superseded_by")
    assert run(db, "facts", "ADR-0004")[0] == 3


def test_the_superseded_file_saying_it_is_enough(tmp_path: Path) -> None:
    adr = tmp_path / "decisions"
    adr.mkdir()
    (adr / "0001-a.md").write_text("# 1. A\n\n## Status\n\nSuperseded by [2. B](0002-b.md)\n")
    (adr / "0002-b.md").write_text("# 2. B\n\n## Status\n\nAccepted\n")
    db = tmp_path / "s.db"
    run(db, "add-context", str(adr), "--namespace", "p", "--json")
    a = facts(db, "ADR-0001")
    assert [r["value"] for r in by(a, "status")] == ["superseded"]
    assert [r["value_label"] for r in by(a, "superseded_by")] == ["2. B"]
    assert [r["value_label"] for r in by(facts(db, "ADR-0002"), "supersedes")] == ["1. A"]


def test_a_bad_file_is_an_error_and_the_rest_goes_on(tmp_path: Path, docs: Path) -> None:
    (docs / "adr" / "0009-broken.md").write_bytes(b"# 9. Broken\n\xff\xfe\n")
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["records_added"] == 3
    assert report["errors"] == [{"path": "adr/0009-broken.md", "line": 2,
                                 "reason": "invalid UTF-8 at byte 12"}]


def test_type_flag_and_unknown_type(tmp_path: Path, docs: Path) -> None:
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs / "notes.md"), "--type", "adr",
                    "--namespace", "myapp", "--json")
    assert code == 0, out
    assert json.loads(out)["warnings"]  # no status, no sections: said, not a crash
    rows = facts(db, "Notes")
    assert [r["value"] for r in by(rows, "entity_type")] == ["adr"]
    code, _ = run(db, "add-context", str(docs), "--type", "nope", "--json")
    assert code == 2


def test_python_api(tmp_path: Path, docs: Path) -> None:
    from knotwork import Knotwork

    with Knotwork.open(None, db=str(tmp_path / "s.db")) as kw:
        report = kw.add_context(docs, namespace="myapp", dry_run=True)
        assert report.as_dict()["records_added"] == 3
        report = kw.add_context(docs, namespace="myapp")
        assert report.records_added == 3
        assert {f.predicate for f in kw.facts("ADR-0004")} >= {"status", "date", "supersedes"}


def test_feature_spec_records_by_id(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "FEATURE-SPEC-auth.md").write_text("""# Feature: User Authentication

Status: planned
Priority: high

### TASK-AUTH-001: Implement JWT tokens

- Status: backlog
- Priority: high
- Wave: 1

### TASK-AUTH-002: Refresh tokens

- Status: backlog
- Wave: 2
- Depends on: TASK-AUTH-001
""")
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(specs), "--namespace", "app", "--json")
    assert code == 0 and json.loads(out)["records_added"] == 3, out
    feature = facts(db, "FEAT-AUTH")
    assert [r["value"] for r in by(feature, "status")] == ["planned"]
    task = facts(db, "TASK-AUTH-002")
    assert [r["value"] for r in by(task, "wave")] == ["2"]
    assert [r["value"] for r in by(task, "status")] == ["backlog"]
    dep = by(task, "depends_on")
    assert dep[0]["value_type"] == "Entity" and dep[0]["value_label"] == "TASK-AUTH-001"
    part = by(task, "part_of")
    assert part[0]["value_type"] == "Entity"
    assert part[0]["value_label"] == "Feature: User Authentication"
    assert [r["value"] for r in by(facts(db, "TASK-AUTH-001"), "priority")] == ["high"]
    code, out = run(db, "--scope", "app__feature_specs", "context", "JWT", "--json")
    assert code == 0 and json.loads(out)["entities"]


def test_a_sidecar_edit_changes_only_what_it_says(tmp_path: Path) -> None:
    kep = tmp_path / "keps" / "sig-apps" / "2232-suspend-jobs"
    kep.mkdir(parents=True)
    (kep / "README.md").write_text("# KEP-2232: Suspend Jobs\n\nText.\n")
    (kep / "kep.yaml").write_text("title: Suspend Jobs\nkep-number: 2232\nstatus: "
                                  "implementable\nstage: beta\nowning-sig: sig-apps\n")
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(tmp_path / "keps"), "--namespace", "k8s", "--json")
    assert code == 0 and json.loads(out)["records_added"] == 1, out
    rows = facts(db, "KEP-2232")
    assert [r["value"] for r in by(rows, "stage")] == ["beta"]
    src = by(rows, "stage")[0]["source"]
    assert isinstance(src, dict)
    assert (src["path"], src["line_start"]) == ("sig-apps/2232-suspend-jobs/kep.yaml", 4)
    (kep / "kep.yaml").write_text("title: Suspend Jobs\nkep-number: 2232\nstatus: "
                                  "implementable\nstage: stable\nowning-sig: sig-apps\n")
    code, out = run(db, "add-context", str(tmp_path / "keps"), "--namespace", "k8s", "--json")
    assert json.loads(out)["records_updated"] == 1
    history = facts(db, "KEP-2232", "--history")
    retracted = [r for r in history if r["retracted_at"]]
    assert [(r["predicate"], r["value"]) for r in retracted] == [("stage", "beta")]


def test_ingest_reads_an_adr_in_a_vault_as_an_adr(tmp_path: Path, docs: Path) -> None:
    db = tmp_path / "s.db"
    code, out = run(db, "ingest", str(docs), "--no-embed", "--json")
    assert code == 0, out
    assert [r["value"] for r in by(facts(db, "ADR-0002"), "status")] == ["superseded"]
    assert [r["value"] for r in by(facts(db, "ADR-0004"), "parser_type")] == ["adr"]


def test_the_namespace_defaults_to_the_project_folder(tmp_path: Path, docs: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs / "adr"), "-v")
    assert code == 0, out
    scope = f"{tmp_path.name.lower().replace('-', '_')}__project_decisions"
    assert scope in out.replace("-", "_")


def test_a_file_read_as_another_type_moves_to_that_category(tmp_path: Path,
                                                          docs: Path) -> None:
    db = tmp_path / "s.db"
    f = docs / "adr" / "0002-use-mysql.md"
    run(db, "add-context", str(docs), "--namespace", "myapp", "--json")
    code, out = run(db, "add-context", str(f), "--type", "note", "--namespace", "myapp",
                    "-v")
    assert code == 0 and "myapp__project_docs" in out, out
    rows = facts(db, "adr/0002-use-mysql")
    assert {r["source"]["path"] for r in rows} == {"adr/0002-use-mysql.md"}  # type: ignore[index]
    assert not by(rows, "parser_type")  # the note parser's reading only, once
    code, out = run(db, "stats", "--json")
    assert json.loads(out)["documents"] == 3


def test_ingest_reads_a_notes_sidecar_and_follows_its_edits(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Traefik.md").write_text("# Traefik\n\nThe proxy.\n")
    (vault / "Traefik.yaml").write_text('owner: "[[Dana]]"\nport: 443\n')
    (vault / "orphan.yaml").write_text("port: 1\n")  # no note beside it: not read
    db = tmp_path / "s.db"
    code, out = run(db, "ingest", str(vault), "--no-embed", "--json")
    assert code == 0 and json.loads(out)["added"] == 2, out
    rows = facts(db, "Traefik")
    port = by(rows, "port")
    assert [r["value"] for r in port] == ["443"]
    assert port[0]["source"]["path"] == "Traefik.yaml"  # type: ignore[index]
    assert [r["value_label"] for r in by(rows, "owner")] == ["Dana"]
    (vault / "Traefik.yaml").write_text('owner: "[[Dana]]"\nport: 8443\n')
    code, out = run(db, "ingest", str(vault), "--no-embed", "--json")
    report = json.loads(out)
    assert (report["updated"], report["facts_added"], report["facts_retracted"]) == (1, 1, 1)
    assert [r["value"] for r in by(facts(db, "Traefik"), "port")] == ["8443"]


def test_the_issue_s_own_commands_scope_after_the_command_and_vectors(
        tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`context "…" --scope myapp__project_decisions` as written (the option after the
    command), and the records embedded as `ingest` embeds notes (`--no-embed` not)."""
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hash")
    db = tmp_path / "s.db"
    code, out = run(db, "add-context", str(docs), "--namespace", "myapp", "-q")
    assert code == 0, out
    code, out = run(db, "stats", "--json")
    assert json.loads(out)["embedding_status"] != "none", out
    code, out = run(db, "context", "why did we move the edge caches to postgres",
                    "--scope", "myapp__project_decisions", "--json")
    assert code == 0, out
    ctx = json.loads(out)
    assert ctx["entities"] and ctx["summary"]["embedding_status"] != "none"
    assert {e["iri"].split("/")[0] for e in ctx["entities"]} == {
        "kw:myapp__project_decisions"}
    code, out = run(db, "context", "edge caches", "--scope", "myapp__project_docs", "--json")
    assert code == 0 and all(e["iri"].startswith("kw:myapp__project_docs/")
                             for e in json.loads(out)["entities"])
    bare = tmp_path / "bare.db"
    code, out = run(bare, "add-context", str(docs), "--namespace", "myapp", "-q", "--no-embed")
    assert code == 0, out
    code, out = run(bare, "stats", "--json")
    assert json.loads(out)["embedding_status"] == "none", out
