"""Records: a section headed by an identifier ("### TASK-ALR-001: Define alert rules")
that holds fields is an entity of its own, part of the note, and its fields are its own."""

from __future__ import annotations

from pathlib import Path

from knotwork.types import SELF, LiteralValue, NameRef, ParsedDocument, SelfRef

from .test_line_fields import parse

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def said(doc: ParsedDocument) -> set[tuple[str, str, str]]:
    """(subject, predicate, object) of every fact, the note as "SELF", names by key."""
    def name(ref: object) -> str:
        if isinstance(ref, SelfRef):
            return "SELF"
        return ref.value if isinstance(ref, LiteralValue) else ref.key  # type: ignore[attr-defined]
    return {(name(f.subject), f.predicate, name(f.object)) for f in doc.facts}


SPEC = """---
status: in-progress
---
# FEAT-x

## Tasks

### TASK-X-001: Define the rules

wave:: 1
status:: done
assignee:: [[Priya]]

Rules for [[Traefik]] certificates. #alerting

### TASK-X-002 Publish them

Status: todo
Wave: 2

depends_on:: [[TASK-X-001]]

## Acceptance

status:: reviewed
"""


def test_a_feature_specs_tasks_are_records_of_their_own() -> None:
    facts = said(parse(SPEC))
    assert {
        ("task-x-001", "part_of", "SELF"), ("task-x-001", "title", "Define the rules"),
        ("task-x-001", "wave", "1"), ("task-x-001", "status", "done"),
        ("task-x-001", "assignee", "priya"),
        ("task-x-002", "part_of", "SELF"), ("task-x-002", "title", "Publish them"),
        # a record's head of field lines is its own, the frontmatter notwithstanding
        ("task-x-002", "status", "todo"), ("task-x-002", "wave", "2"),
        ("task-x-002", "depends_on", "task-x-001"),
    } <= facts
    # the note keeps its own status, what its prose links and tags, and the fields under
    # a heading of the record's level or above
    assert {("SELF", "status", "in-progress"), ("SELF", "links_to", "traefik"),
            ("SELF", "tag", "alerting"), ("SELF", "status", "reviewed")} <= facts
    assert not {f for f in facts if f[0] == "SELF" and f[1] in ("wave", "assignee")}


def test_a_record_cites_its_heading() -> None:
    doc = parse(SPEC)
    part = next(f for f in doc.facts if f.predicate == "part_of"
                and f.subject == NameRef.of("TASK-X-001"))
    assert (part.object, part.span.line_start, part.supporting_text, part.extractor) == (
        SELF, 8, "### TASK-X-001: Define the rules", "record")


def test_an_identifier_heading_without_fields_is_just_a_heading() -> None:
    facts = said(parse("# Eval\n\n## GPT-4 results\n\nIt did well on [[Bench]].\n", "e.md"))
    assert facts == {("SELF", "links_to", "bench")}


def test_headings_without_a_digit_or_at_the_top_are_no_records() -> None:
    for text in ("# Eval\n\n## FEAT-ALR overview\n\nowner:: [[Ada]]\n",
                 "# ADR-7: Use queues\n\nowner:: [[Ada]]\n"):
        assert said(parse(text, "e.md")) == {("SELF", "owner", "ada")}


def test_the_example_feature_spec() -> None:
    path = "projects/FEAT-alerting.md"
    facts = said(parse((VAULT / path).read_text(encoding="utf-8"), path))
    assert ("task-alr-002", "depends_on", "task-alr-001") in facts
    assert ("task-alr-003", "status", "todo") in facts
    assert ("SELF", "status", "in-progress") in facts
    assert not {f for f in facts if f[0] == "SELF" and f[1] in ("wave", "assignee")}


def test_an_identifier_opening_a_title_names_the_note() -> None:
    """Every Kubernetes KEP is a README.md titled "# KEP-3017: …": other notes cite it
    as "KEP-3017", and now find it by that."""
    doc = parse("# KEP-3017: Unhealthy Pod Eviction Policy\n\nText.\n",
                "keps/sig-apps/3017-x/README.md")
    assert ("KEP-3017", "alias") in {(n.text, n.kind) for n in doc.names}
    for title in ("# GPT4: results\n", "# COVID notes\n", "# Plain title\n",
                  "# ADR-7.2 update\n", "# KEP-3017\n"):
        assert {n.kind for n in parse(title, "t.md").names} == {"path", "title"}


def test_a_records_status_section_is_its_own_beside_the_notes_frontmatter() -> None:
    doc = parse("---\nstatus: active\n---\n# F\n\n## TASK-9: Ship\n\nwave:: 3\n\n"
                "### Status\n\nBlocked\n", "f.md")
    assert {("task-9", "status", "Blocked"), ("SELF", "status", "active"),
            ("task-9", "wave", "3")} <= said(doc)


def test_an_inline_title_field_stays_a_fact() -> None:
    assert ("SELF", "title", "Other") in said(parse("A line.\ntitle:: Other\n", "t.md"))
