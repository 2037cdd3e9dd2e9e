"""The typed parsers on fixtures written for them, malformed ones included, and their
coverage on the shared real corpora (ADRs, Kubernetes KEPs, Rust RFCs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knotwork.ingest.parsers import default_registry
from knotwork.ingest.parsers.adr import normalise_status
from knotwork.ingest.parsers.typed import iso_date
from knotwork.types import SELF, LiteralValue, NameRef, ParsedDocument

DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets"
REG = default_registry()


def parse(path: str, text: str, type: str | None = None) -> ParsedDocument:
    out = REG.parse(path, text.encode(), type=type)
    assert isinstance(out, ParsedDocument), out
    return out


def values(doc: ParsedDocument, predicate: str, subject: object = SELF) -> list[str]:
    out = []
    for f in doc.facts:
        if f.predicate == predicate and f.subject == subject:
            obj = f.object
            out.append(obj.value if isinstance(obj, LiteralValue) else
                       obj.text if isinstance(obj, NameRef) else "SELF")
    return out


def warnings(doc: ParsedDocument) -> list[tuple[int | None, str]]:
    return [(i.line, i.reason) for i in doc.issues]


def test_detection_order() -> None:
    assert REG.choose("docs/adr/0004-x.md", b"").type == "adr"
    assert REG.choose("docs/ADR-7-x.md", b"").type == "adr"
    assert REG.choose("docs/decision-records/012-x.md", b"").type == "adr"
    assert REG.choose("docs/notes/0004-x.md", b"# x").type == "note"
    assert REG.choose("keps/sig-apps/2232-suspend-jobs/README.md", b"").type == "kep"
    assert REG.choose("keps/sig-apps/2232-suspend-jobs/kep.yaml", b"").type == "sidecar"
    assert REG.choose("text/0001-x.md", b"- Feature Name: x\n- Start Date: 2014-03-11\n"
                      ).type == "rfc"
    assert REG.choose("docs/adr/0004-x.md", b"", type="note").type == "note"


def test_nygard_adr_with_links_and_amendments() -> None:
    doc = parse("decisions/0017-data.md", """# 17. Terraform Data Structure

Date: 2017-07-04

## Status

Accepted

Amends [10. Terraform directory structure](0010-terraform-directory-structure.md)

## Context

Text.

## Decision

We do it.

## Consequences

Some.
""")
    assert values(doc, "status") == ["accepted"] and values(doc, "date") == ["2017-07-04"]
    assert values(doc, "number") == ["ADR-0017"]
    assert values(doc, "amends") == ["decisions/0010-terraform-directory-structure"]
    target = NameRef.of("decisions/0010-terraform-directory-structure")
    assert values(doc, "amended_by", subject=target) == ["SELF"]
    names = {n.text for n in doc.names}
    assert {"ADR-0017", "Terraform Data Structure"} <= names
    assert warnings(doc) == []
    fact = next(f for f in doc.facts if f.predicate == "date")
    assert (fact.span.line_start, fact.span.line_end) == (3, 3)


def test_madr_front_matter_options_and_chosen_option() -> None:
    doc = parse("docs/decisions/0003-x.md", """---
status: "superseded by ADR-0007"
date: 2024-05-01
deciders: Ada, Bob and Cy
consulted: [Dee]
---
# Use X

## Context and Problem Statement

Why.

## Considered Options

* X
* [Y](https://y.example)

## Decision Outcome

Chosen option: "X", because it is best.

### Consequences

* Good, because fast.
* Bad, because new.
""")
    assert values(doc, "status") == ["superseded"]
    assert values(doc, "superseded_by") == ["ADR-0007"]
    assert values(doc, "supersedes", subject=NameRef.of("ADR-0007")) == ["SELF"]
    assert values(doc, "deciders") == ["Ada", "Bob", "Cy"]
    assert values(doc, "consulted") == ["Dee"]
    assert values(doc, "considered_option") == ["X", "Y"]
    assert values(doc, "chosen_option") == ["X"]
    assert values(doc, "consequence") == ["Good, because fast", "Bad, because new"]
    assert values(doc, "date") == ["2024-05-01"]


@pytest.mark.parametrize(("text", "reason"), [
    ("# 1. A\n\n## Status\n\nAccepted\n\n## Context\n\nx\n", "no '## Decision'"),
    ("# 1. A\n\nStatus: Accepted\n\n## Status\n\nRejected\n\n## Context\n\nx\n"
     "## Decision\n\ny\n", "two statuses: 'Accepted' (line 3) and 'Rejected' (line 7)"),
    ("# 1. A\n\n## Status\n\nMaybe later\n\n## Context\n\nx\n## Decision\n\ny\n",
     "unknown status 'Maybe later'"),
    ("---\nstatus: accepted\n---\n", "no title"),
    ("# 1. A\n\nDate: 2024-13-45\n\n## Context\n\nx\n## Decision\n\ny\n",
     "date '2024-13-45' is no date"),
    ("# 1. A\n\n## Status\n\n## Context\n\nx\n## Decision\n\ny\n",
     "the '## Status' section is empty"),
])
def test_malformed_adrs_warn_with_a_line_and_never_crash(text: str, reason: str) -> None:
    doc = parse("adr/0001-a.md", text)
    found = warnings(doc)
    assert any(reason in r and line is not None for line, r in found), found


def test_an_unknown_status_keeps_its_words_and_the_first_of_two_wins() -> None:
    doc = parse("adr/0001-a.md", "# 1. A\n\n## Status\n\nMaybe later\n")
    assert values(doc, "status") == [] and values(doc, "status_text") == ["Maybe later"]
    doc = parse("adr/0001-a.md", "# 1. A\n\nStatus: Accepted\n\n## Status\n\nRejected\n")
    assert values(doc, "status") == ["accepted"]


def test_status_words_and_dates() -> None:
    assert [normalise_status(s) for s in (
        "✅ Accepted", "🤔 Proposed", "Pending", "on hold", "❌ Rejected (see [019](x.md))",
        "⌛️ Superseded by [36. Multi](036-multi.md)", "Deprecated", "Approved", "banana")] == [
        "accepted", "proposed", "proposed", "proposed", "rejected", "superseded",
        "deprecated", "accepted", None]
    assert [iso_date(s) for s in ("2017-06-30", "26/03/2018", "2020/05/18", "23-07-2014",
                                  "March 4, 2020", "4 March 2020", "(2016-06-17)",
                                  "2023-10-3", "soon", "2014-19-19")] == [
        "2017-06-30", "2018-03-26", "2020-05-18", "2014-07-23", "2020-03-04", "2020-03-04",
        "2016-06-17", "2023-10-03", None, None]


def test_rfc_head_and_kep_sidecar() -> None:
    doc = parse("text/2000-const-generics.md", """- Feature Name: `const_generics`
- Start Date: 2017-05-01
- RFC PR: [rust-lang/rfcs#2000](https://github.com/rust-lang/rfcs/pull/2000)
- Rust Issue: [rust-lang/rust#44580](https://github.com/rust-lang/rust/issues/44580)

# Summary

Const generics.
""")
    assert doc.doc_type == "rfc"
    assert values(doc, "start_date") == ["2017-05-01"]
    assert values(doc, "rfc_pr") == ["rust-lang/rfcs#2000"]
    assert values(doc, "tracking_issue") == ["rust-lang/rust#44580"]
    assert values(doc, "number") == ["RFC-2000"]
    assert values(doc, "feature_name") == ["const_generics"]
    side = parse("keps/sig-apps/2232-suspend-jobs/kep.yaml", """title: Suspend Jobs
kep-number: 2232
owning-sig: sig-apps
participating-sigs:
  - sig-scheduling
status: implemented
stage: stable
milestone:
  alpha: "v1.21"
  beta: "v1.22"
feature-gates:
  - name: SuspendJob
see-also:
  - "/keps/sig-apps/1234-other"
""")
    kep = NameRef.of("keps/sig-apps/2232-suspend-jobs/README")
    assert values(side, "status", kep) == ["implemented"]
    assert values(side, "stage", kep) == ["stable"]
    assert values(side, "owning_sig", kep) == ["sig-apps"]
    assert values(side, "participating_sig", kep) == ["sig-scheduling"]
    assert values(side, "milestone_beta", kep) == ["v1.22"]
    assert values(side, "feature_gate", kep) == ["SuspendJob"]
    assert values(side, "see_also", kep) == ["KEP-1234"]
    line = {f.predicate: f.span.line_start for f in side.facts}
    assert (line["stage"], line["milestone_beta"], line["feature_gate"]) == (7, 10, 12)
    bad = parse("notes/a.yaml", "key: [unclosed\n")
    assert bad.issues and bad.issues[0].line is not None and not bad.facts


def test_a_note_sidecar_is_the_notes_frontmatter() -> None:
    doc = parse("notes/Traefik.yaml", "owner: \"[[Dana]]\"\nport: 443\n")
    note = NameRef.of("notes/Traefik")
    assert values(doc, "owner", note) == ["Dana"]
    assert values(doc, "port", note) == ["443"]


# ---------------------------------------------------------------- the real corpora


def _files(folder: Path) -> list[tuple[str, bytes]]:
    return [(f"{folder.name}/{f.relative_to(folder).as_posix()}", f.read_bytes())
            for f in sorted(folder.rglob("*")) if f.is_file() and f.suffix in (".md", ".yaml")]


def _self(doc: ParsedDocument) -> set[str]:
    return {f.predicate for f in doc.facts if f.subject == SELF}


@pytest.mark.skipif(not (DATA / "adrs").is_dir(), reason="shared corpus absent")
def test_adr_corpus_status_and_date_coverage() -> None:
    status = date = has_status = has_date = adrs = 0
    for path, data in _files(DATA / "adrs"):
        if not path.endswith(".md") or REG.choose(path, data[:4096]).type != "adr":
            continue
        adrs += 1
        doc = parse(path, data.decode())
        text = data.decode()
        if re.search(r"(?im)^(?:status:[ \t]*\S|#+[ \t]*status\b|\**status\**:)", text):
            has_status += 1
            status += "status" in _self(doc)
        if re.search(r"(?im)^(?:date:[ \t]*\S|\**date\**:[ \t]*\S)", text):
            has_date += 1
            date += "date" in _self(doc)
    assert adrs >= 100
    assert status / has_status >= 0.95, (status, has_status)
    assert date / has_date >= 0.95, (date, has_date)


@pytest.mark.skipif(not (DATA / "k8s_keps").is_dir(), reason="shared corpus absent")
def test_kep_corpus_status_stage_sig_coverage() -> None:
    """Of the KEPs whose kep.yaml states each (a few have no ``stage``, or an empty one)."""
    keps = 0
    keys = {"status": "status", "stage": "stage", "owning_sig": "owning-sig"}
    got = {k: [0, 0] for k in keys}
    for path, data in _files(DATA / "k8s_keps" / "keps"):
        if path.endswith("README.md"):
            assert REG.choose(path, data[:4096]).type == "kep", path
            keps += 1
        if not path.endswith("kep.yaml"):
            continue
        doc = parse(path, data.decode())
        preds = {f.predicate for f in doc.facts}
        for k, key in keys.items():
            if re.search(rf"(?m)^{key}:[ \t]*[\"']?\w", data.decode()):
                got[k][1] += 1
                got[k][0] += k in preds
    assert keps >= 150
    for k, (n, of) in got.items():
        assert of >= 150 and n / of >= 0.98, (k, n, of)


@pytest.mark.skipif(not (DATA / "rust_rfcs").is_dir(), reason="shared corpus absent")
def test_rfc_corpus_start_date_and_pr_coverage() -> None:
    got = {"start_date": [0, 0], "rfc_pr": [0, 0]}
    for path, data in _files(DATA / "rust_rfcs" / "text"):
        head = "\n".join(data.decode().splitlines()[:20])
        doc = parse(path, data.decode())
        for key, pattern in (("start_date", r"start date\s*:"), ("rfc_pr", r"e?rfc pr\s*#?\s*:")):
            if re.search(rf"(?im)^[-*]\s*{pattern}", head):
                got[key][1] += 1
                got[key][0] += key in _self(doc)
    for key, (n, of) in got.items():
        assert of >= 600 and n / of >= 0.95, (key, n, of)


SPEC = """---
id: FEAT-ALR
status: in_progress
priority: high
---
# Feature: Alerting

## Objectives

- Page the on-call engineer within a minute

## Phases

### Phase 1: rules

## Dependencies

- FEAT-METRICS
- A running Prometheus

## Tasks

### TASK-ALR-001: Define alert rules

- Status: done
- Priority: high
- Wave: 1

### TASK-ALR-002: Route alerts

**Status:** in_progress
**Wave:** soon
**Depends on:** TASK-ALR-001

### TASK-ALR-002: Route alerts again

Status: backlog

| id | name | status | wave | depends on |
|---|---|---|---|---|
| TASK-ALR-003 | Silence windows | backlog | 3 | TASK-ALR-001, TASK-ALR-002 |
"""


def test_feature_spec_gives_one_record_per_task() -> None:
    doc = parse("docs/FEATURE-SPEC-alerts.md", SPEC)
    assert doc.doc_type == "feature-spec"
    assert values(doc, "feature_id") == ["FEAT-ALR"] and values(doc, "name") == ["Alerting"]
    assert values(doc, "status") == ["in_progress"] and values(doc, "priority") == ["high"]
    assert values(doc, "objective") == ["Page the on-call engineer within a minute"]
    assert values(doc, "phase") == ["Phase 1: rules"]
    assert values(doc, "depends_on") == ["FEAT-METRICS"]
    assert values(doc, "dependency") == ["A running Prometheus"]
    t1, t2, t3 = (NameRef.of(f"TASK-ALR-00{n}") for n in (1, 2, 3))
    assert values(doc, "status", t1) == ["done"] and values(doc, "wave", t1) == ["1"]
    assert values(doc, "part_of", t1) == ["SELF"]
    assert values(doc, "status", t2) == ["in_progress"]  # the repeated id's are not its
    assert values(doc, "depends_on", t2) == ["TASK-ALR-001"]
    assert values(doc, "depends_on", t3) == ["TASK-ALR-001", "TASK-ALR-002"]
    assert values(doc, "wave", t3) == ["3"]
    reasons = warnings(doc)
    assert (35, "task TASK-ALR-002 is written twice (lines 29 and 35); the first is kept"
            ) in reasons
    assert any(line == 32 and "wave 'soon'" in r for line, r in reasons)
    line = {(getattr(f.subject, "key", ""), f.predicate): f.span.line_start for f in doc.facts}
    assert line[(t1.key, "status")] == 25 and line[(t3.key, "status")] == 41


def test_a_spec_without_tasks_or_id_warns() -> None:
    doc = parse("FEAT-x.md", "# Something\n\nText.\n")
    assert values(doc, "feature_id") == ["FEAT-X"]
    assert any("no tasks" in r for _, r in warnings(doc))


def test_overview() -> None:
    doc = parse("README.md", """# Northwind

[![ci](https://x/badge.svg)](https://x)

Northwind ships **edge caches** for the shop.

## Tech Stack

- Python 3.12
- [Postgres](https://postgresql.org)

## Components

- `api`: the REST front
- worker

## Links

- Docs: https://docs.example.com
- [Runbook](https://runbook.example.com)
""")
    assert doc.doc_type == "project-overview"
    assert values(doc, "project_name") == ["Northwind"]
    assert values(doc, "purpose") == ["Northwind ships edge caches for the shop."]
    assert values(doc, "tech_stack") == ["Python 3.12", "Postgres"]
    assert values(doc, "component") == ["api: the REST front", "worker"]
    assert values(doc, "link") == ["https://docs.example.com", "https://runbook.example.com"]
    assert REG.choose("sub/README.md", b"").type == "note"


def test_linked_deciders_are_entities() -> None:
    doc = parse("decisions/ADR-001-x.md", '---\ndeciders: ["[[Dana Whitfield]]", Bob]\n---\n'
                "# ADR-001: X\n")
    objs = [f.object for f in doc.facts if f.predicate == "deciders"]
    assert objs == [NameRef.of("Dana Whitfield"), LiteralValue("Bob")]
