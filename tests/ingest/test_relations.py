"""Relations: sentence inference in five languages, list relations, observations, fields."""

from __future__ import annotations

import pytest

from knotwork.ingest import parse_markdown
from knotwork.types import SELF, EntityRef, FactDraft, LiteralValue, NameRef, ParsedDocument


def parse(text: str, path: str = "services/Traefik.md") -> ParsedDocument:
    doc = parse_markdown(path, text.encode())
    assert isinstance(doc, ParsedDocument), doc
    return doc


def triples(doc: ParsedDocument) -> list[tuple[str, str, str]]:
    def name(ref: object) -> str:
        if ref is SELF:
            return "SELF"
        if isinstance(ref, NameRef):
            return ref.text
        assert isinstance(ref, LiteralValue)
        return f"'{ref.value}'"
    return [(name(f.subject), f.predicate, name(f.object)) for f in doc.facts]


def only(doc: ParsedDocument) -> FactDraft:
    (fact,) = doc.facts
    return fact


@pytest.mark.parametrize(
    ("sentence", "predicate"),
    [
        ("It runs on [[kota]].", "runs_on"),
        ("The proxy is hosted on the [[kota]] box.", "runs_on"),
        ("This depends on [[kota]].", "depends_on"),
        ("Alice works with [[kota]] daily.", "works_with"),
        ("She reports to [[kota]].", "reports_to"),
        ("The service is part of [[kota]].", "part_of"),
        ("Team X owns [[kota]].", "owns"),
        ("It replaces [[kota]].", "replaces"),
        ("We use [[kota]] for this.", "uses"),
        ("The office is located in [[kota]].", "located_at"),
        ("Der Dienst läuft auf [[kota]].", "runs_on"),
        ("Er hängt von [[kota]] ab.", "depends_on"),
        ("Es ist abhängig von [[kota]].", "depends_on"),
        ("Sie arbeitet mit [[kota]].", "works_with"),
        ("Er berichtet an [[kota]].", "reports_to"),
        ("Das Modul ist Teil von [[kota]].", "part_of"),
        ("Das gehört zu [[kota]].", "part_of"),
        ("Das ersetzt [[kota]].", "replaces"),
        ("Wir nutzen [[kota]] täglich.", "uses"),
        ("Das Team verwendet [[kota]].", "uses"),
        ("Il servizio gira su [[kota]].", "runs_on"),
        ("Il sito è ospitato su [[kota]].", "runs_on"),
        ("Il servizio dipende dal [[kota]].", "depends_on"),
        ("Lei lavora con [[kota]].", "works_with"),
        ("Marco riporta a [[kota]].", "reports_to"),
        ("Il modulo fa parte della [[kota]].", "part_of"),
        ("Questo sostituisce [[kota]].", "replaces"),
        ("Il team utilizza [[kota]].", "uses"),
        ("Le service tourne sur [[kota]].", "runs_on"),
        ("Le service dépend de [[kota]].", "depends_on"),
        ("Elle travaille avec [[kota]].", "works_with"),
        ("Il rend compte à [[kota]].", "reports_to"),
        ("Le module fait partie du [[kota]].", "part_of"),
        ("Cela remplace [[kota]].", "replaces"),
        ("L'équipe utilise [[kota]].", "uses"),
        ("El servicio se ejecuta en [[kota]].", "runs_on"),
        ("El servicio depende de [[kota]].", "depends_on"),
        ("Ella trabaja con [[kota]].", "works_with"),
        ("Juan reporta a [[kota]].", "reports_to"),
        ("El módulo forma parte del [[kota]].", "part_of"),
        ("Esto reemplaza [[kota]].", "replaces"),
        ("El equipo utiliza [[kota]].", "uses"),
    ],
)
def test_sentence_inference(sentence: str, predicate: str) -> None:
    fact = parse(f"intro\n\n{sentence}\n").facts[0]
    assert fact.predicate == predicate and fact.object == NameRef.of("kota")
    assert fact.subject is SELF and fact.confidence == 0.8
    assert fact.extractor == "wikilink"
    assert fact.span.line_start == 3
    assert fact.supporting_text in sentence and "[[kota]]" in fact.supporting_text


def test_no_relation_is_links_to_with_full_confidence() -> None:
    fact = only(parse("Background on [[kota]] is here.\n"))
    assert (fact.predicate, fact.confidence) == ("links_to", 1.0)
    assert fact.supporting_text == "Background on [[kota]] is here."


def test_sentence_boundaries_and_supporting_text() -> None:
    doc = parse("It was slow. Now it runs on [[kota]]; [[Other]] is unrelated! ok\n")
    assert triples(doc) == [("SELF", "runs_on", "kota"), ("SELF", "links_to", "Other")]
    assert doc.facts[0].supporting_text == "Now it runs on [[kota]];"
    assert doc.facts[1].supporting_text == "[[Other]] is unrelated!"


def test_previous_link_becomes_the_subject() -> None:
    doc = parse("[[Traefik]] runs on [[kota]]. [[Alice]] reports to **[[Bob]]**.\n")
    assert triples(doc) == [
        ("SELF", "links_to", "Traefik"),
        ("Traefik", "runs_on", "kota"),
        ("SELF", "links_to", "Alice"),
        ("Alice", "reports_to", "Bob"),
    ]


def test_previous_link_only_when_the_phrase_is_all_between() -> None:
    doc = parse("[[Traefik]] (the proxy) runs on [[kota]].\n")
    assert triples(doc)[1] == ("SELF", "runs_on", "kota")


def test_previous_link_in_another_sentence_is_not_the_subject() -> None:
    doc = parse("[[A]] is old. Runs on [[B]].\n")
    assert triples(doc)[1] == ("SELF", "runs_on", "B")


def test_multilingual_previous_link_subject() -> None:
    doc = parse("[[Traefik]] läuft auf [[kota]].\n[[Web]] dipende da [[DB]].\n")
    assert ("Traefik", "runs_on", "kota") in triples(doc)
    assert ("Web", "depends_on", "DB") in triples(doc)


def test_sentence_across_wrapped_lines() -> None:
    doc = parse("The proxy is hosted on the\n[[kota]] box. Next.\n")
    fact = only(doc)
    assert fact.predicate == "runs_on"
    assert (fact.span.line_start, fact.span.line_end) == (1, 2)
    assert fact.supporting_text == "The proxy is hosted on the\n[[kota]] box."


def test_markdown_link_relations() -> None:
    doc = parse("It depends on [the DB](../db/Postgres.md).\n")
    fact = only(doc)
    assert (fact.predicate, fact.object, fact.extractor) == (
        "depends_on", NameRef.of("db/Postgres"), "mdlink")


def test_word_boundary() -> None:
    assert only(parse("Reruns on [[kota]].\n")).predicate == "links_to"


def test_list_relations() -> None:
    doc = parse(
        "- depends_on [[Postgres]], [[Redis]] (cache)\n"
        "- depends on [[A]]\n"
        "- hängt ab von [[B]]\n"
        "- dipende da [[C]]\n"
        "* implements [[Spec]] #tag\n"
        "1. inspired by [[Book]]\n"
        "- works with [[X]] and [[Y]].\n"
    )
    assert triples(doc) == [
        ("SELF", "depends_on", "Postgres"),
        ("SELF", "depends_on", "Redis"),
        ("SELF", "depends_on", "A"),
        ("SELF", "depends_on", "B"),
        ("SELF", "depends_on", "C"),
        ("SELF", "tag", "'tag'"),
        ("SELF", "implements", "Spec"),
        ("SELF", "inspired_by", "Book"),
        ("SELF", "works_with", "X"),
        ("SELF", "works_with", "Y"),
    ]
    rel = doc.facts[0]
    assert rel.extractor == "list_relation" and rel.confidence == 1.0
    assert rel.supporting_text == "- depends_on [[Postgres]], [[Redis]] (cache)"


def test_list_items_that_are_prose() -> None:
    doc = parse(
        "- See [[X]] for details.\n"
        "- Traefik runs on [[kota]]\n"
        "- [ ] call [[Bob]]\n"
        "- Monitoring lives in [[Grafana]]\n"
        "- [[Plain]] item\n"
        "- depends_on [[Z]]\n  continued about [[W]]\n"
    )
    assert triples(doc) == [
        ("SELF", "links_to", "X"),
        ("SELF", "runs_on", "kota"),
        ("SELF", "links_to", "Bob"),
        ("SELF", "links_to", "Grafana"),
        ("SELF", "links_to", "Plain"),
        ("SELF", "depends_on", "Z"),
        ("SELF", "links_to", "W"),
    ]
    assert doc.facts[1].extractor == "wikilink" and doc.facts[1].confidence == 0.8


def test_a_heading_that_names_a_relation_gives_it_to_its_list_items() -> None:
    doc = parse(
        "## Dependencies\n\n"
        "- [[Postgres]]\n"
        "- **[[Kestrel Queue]]** for jobs, see [[Runbook]]\n"
        "- See [[Other]] too\n"
        "- uses [[Redis]]\n"
        "- [ ] drop [[MySQL]]\n\n"
        "Prose about [[Prose]].\n\n"
        "## Owners\n\n- [[Ada]]\n- [[Bob]] and [[Cy]]\n\n"
        "## Teil von\n\n1. [[Plattform]]\n\n"
        "### Notes\n\n- [[After]]\n"
    )
    assert triples(doc) == [
        ("SELF", "depends_on", "Postgres"),
        ("SELF", "depends_on", "Kestrel Queue"),
        ("SELF", "links_to", "Runbook"),  # not at the item's start
        ("SELF", "links_to", "Other"),
        ("SELF", "uses", "Redis"),  # the item names its own relation
        ("SELF", "links_to", "MySQL"),  # a task
        ("SELF", "links_to", "Prose"),  # no list item
        ("SELF", "owner", "Ada"),
        ("SELF", "owner", "Bob"),
        ("SELF", "owner", "Cy"),
        ("SELF", "part_of", "Plattform"),
        ("SELF", "links_to", "After"),  # another heading ends the section
    ]
    first = doc.facts[0]
    assert first.extractor == "section_list" and first.confidence == 1.0
    assert first.supporting_text == "- [[Postgres]]" and first.span.line_start == 3


def test_relation_headings_in_other_languages_and_taught_ones(taught_relation: None) -> None:
    from knotwork.ingest import lexicon

    text = "## Dépendances\n\n- [[Base]]\n\n## Voraussetzungen\n\n- [[Netz]]\n"
    assert triples(parse(text)) == [("SELF", "depends_on", "Base"),
                                    ("SELF", "links_to", "Netz")]
    lexicon.register_key("depends_on", "Voraussetzungen")
    assert triples(parse(text)) == [("SELF", "depends_on", "Base"),
                                    ("SELF", "depends_on", "Netz")]


def test_nested_list_relations() -> None:
    doc = parse("- parent\n  - uses [[Child]]\n    - part_of [[Grand]]\n")
    assert triples(doc) == [("SELF", "uses", "Child"), ("SELF", "part_of", "Grand")]
    assert [f.span.line_start for f in doc.facts] == [2, 3]


def test_observations() -> None:
    doc = parse(
        "- [decision] Use Traefik over #nginx for TLS (2023 review)\n"
        "- [Open Question] Should we move to [[Caddy]]?\n"
        "- [x] done task\n"
        "- [ ] open task\n"
        "- [link text](Other.md)\n"
        "- [[Wiki]] item\n"
    )
    obs = [f for f in doc.facts if f.predicate == "observation"]
    assert [(f.object, f.qualifiers) for f in obs] == [
        (LiteralValue("Use Traefik over for TLS"), (("category", "decision"),)),
        (LiteralValue("Should we move to [[Caddy]]?"), (("category", "open question"),)),
    ]
    assert obs[0].extractor == "observation" and obs[0].span.line_start == 1
    assert ("SELF", "tag", "'nginx'") in triples(doc)
    assert ("SELF", "links_to", "Caddy") in triples(doc)
    assert ("SELF", "links_to", "services/Other") in triples(doc)


def test_inline_fields() -> None:
    doc = parse(
        "status:: active\n"
        "- count:: 42\n"
        "**Ratio**:: 0.5\n"
        "done:: true\n"
        "due:: 2024-05-01\n"
        "at:: 2024-05-01T10:30:00\n"
        "Met [with:: [[Bob]], [[Ann]]] on (when:: 2024-01-05) about [topic:: caching].\n"
        "owner:: [[Alice Smith]]\n"
        "Ruolo:: sviluppatrice\n"
        "tags:: #a, b\n"
        "Use std::vector here\n"
        "empty::\n"
    )
    assert triples(doc) == [
        ("SELF", "status", "'active'"),
        ("SELF", "count", "'42'"),
        ("SELF", "ratio", "'0.5'"),
        ("SELF", "done", "'true'"),
        ("SELF", "due", "'2024-05-01'"),
        ("SELF", "at", "'2024-05-01T10:30:00'"),
        ("SELF", "with", "Bob"),
        ("SELF", "with", "Ann"),
        ("SELF", "when", "'2024-01-05'"),
        ("SELF", "topic", "'caching'"),
        ("SELF", "owner", "Alice Smith"),
        ("SELF", "role", "'sviluppatrice'"),
        ("SELF", "tag", "'a'"),
        ("SELF", "tag", "'b'"),
    ]
    datatypes = {f.predicate: f.object.datatype for f in doc.facts  # type: ignore[union-attr]
                 if isinstance(f.object, LiteralValue)}
    assert datatypes["count"] == "integer" and datatypes["ratio"] == "number"
    assert datatypes["done"] == "boolean" and datatypes["due"] == "date"
    assert datatypes["at"] == "datetime" and datatypes["status"] == "string"
    assert all(f.extractor == "inline_field" for f in doc.facts)
    assert doc.facts[6].span.line_start == 7


def test_inline_field_in_code_is_ignored() -> None:
    assert parse("`key:: value`\n```\nk:: v\n```\n").facts == ()


def test_subject_types() -> None:
    doc = parse("[[A]] uses [[B]].\n")
    subject: EntityRef = doc.facts[1].subject
    assert subject == NameRef.of("A")


def test_listed_links_share_the_relation() -> None:
    doc = parse("Dana owns [[kota]], [[Traefik]] and [[Postgres]]. Also [[X]], [[Y]].\n")
    assert triples(doc) == [
        ("SELF", "owns", "kota"),
        ("SELF", "owns", "Traefik"),
        ("SELF", "owns", "Postgres"),
        ("SELF", "links_to", "X"),
        ("SELF", "links_to", "Y"),
    ]
    assert all(f.confidence == 0.8 for f in doc.facts[:3])


def test_listed_links_share_the_subject_too() -> None:
    doc = parse("[[Grafana]] hängt von [[Prometheus]] und [[Loki]] ab.\n")
    assert triples(doc) == [
        ("SELF", "links_to", "Grafana"),
        ("Grafana", "depends_on", "Prometheus"),
        ("Grafana", "depends_on", "Loki"),
    ]


def test_template_slots_and_wide_task_boxes_are_no_observations() -> None:
    # keps/sig-apps/1591-daemonset-surge/README.md:289 (the KEP template) and
    # keps/sig-storage/3756-volume-reconstruction/README.md:111: "- [Optional] Label:" is
    # a slot awaiting its value, "- [  ] item" a task box typed with two blanks.
    doc = parse(
        "- [Optional] Aggregation method:\n"
        "- [Optional] Aggregation method: (see below)\n"
        "- [  ] e2e Tests for all Beta API Operations (endpoints)\n"
        "- [decision] Use Traefik: it is simple\n"
    )
    obs = [(f.object, f.qualifiers) for f in doc.facts if f.predicate == "observation"]
    assert obs == [(LiteralValue("Use Traefik: it is simple"), (("category", "decision"),))]


def test_an_instruction_to_use_a_note_is_no_uses_relation() -> None:
    # foam user/tools/cli/links.md:57 "Use [[note|foam note id]] to check …" and
    # adrs madr/decisions/index.md:10 "please use [adr-template.md](…) as basis": the
    # reader is told to use it, the note does not. "We use [[X]]" still says it does,
    # and a list item "- use [[X]]" is still the relation type.
    doc = parse("Use [[note|foam note id]] to check how a note is identified.\n\n"
                "For new ADRs, please use [[adr-template]] as basis.\n\n"
                "You can use [[cli-grep]] instead.\n\n"
                "We use [[kota]]. They also use [[vega]]. It uses [[lyra]].\n\n"
                "We will use [[Traefik]] as the edge proxy.\n\n"
                "- use [[Child]]\n")
    assert triples(doc) == [
        ("SELF", "links_to", "note"), ("SELF", "links_to", "adr-template"),
        ("SELF", "links_to", "cli-grep"), ("SELF", "uses", "kota"),
        ("SELF", "uses", "vega"), ("SELF", "uses", "lyra"), ("SELF", "uses", "Traefik"),
        ("SELF", "uses", "Child"),
    ]


def test_a_list_item_relation_is_written_as_one(taught_relation: None) -> None:
    """A phrase before an item's link is a relation type when the lexicon knows it or it
    is written as one (a short key, a word and a preposition); else the link is a link."""
    doc = parse(
        "- look them up using [[Lookup]]\n"
        "- add remark containers plugin [[Plugin]]\n"
        "- published the [[Release]]\n"
        "- add_remark_containers_plugin [[Plugin2]]\n"
        "- blocked-by [[Review]]\n"
        "- reviewed by [[Ada]]\n"
        "- implements [[Spec]]\n"
    )
    assert triples(doc) == [
        ("SELF", "links_to", "Lookup"),
        ("SELF", "links_to", "Plugin"),
        ("SELF", "links_to", "Release"),
        ("SELF", "links_to", "Plugin2"),
        ("SELF", "blocked_by", "Review"),
        ("SELF", "reviewed_by", "Ada"),
        ("SELF", "implements", "Spec"),
    ]
