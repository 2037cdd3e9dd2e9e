"""Frontmatter: every key a fact, names and title, typed values, malformed YAML."""

from __future__ import annotations

from knotwork.ingest import parse_markdown
from knotwork.types import SELF, FactDraft, Issue, LiteralValue, NameDecl, NameRef, ParsedDocument


def parse(text: str, path: str = "people/Alice Smith.md") -> ParsedDocument:
    doc = parse_markdown(path, text.encode())
    assert isinstance(doc, ParsedDocument), doc
    return doc


def values(doc: ParsedDocument, predicate: str) -> list[object]:
    return [f.object for f in doc.facts if f.predicate == predicate]


def test_keys_types_and_spans() -> None:
    doc = parse(
        "---\n"
        "title: Alice\n"
        "Runs On: \"[[kota]]\"\n"
        "kep-number: 42\n"
        "ratio: 0.25\n"
        "active: true\n"
        "born: 1990-05-01\n"
        "seen: 2024-01-02T03:04:05Z\n"
        "nothing:\n"
        "blank: ''\n"
        "---\n"
        "Body.\n"
    )
    by_pred = {f.predicate: f for f in doc.facts}
    assert "title" not in by_pred and "nothing" not in by_pred and "blank" not in by_pred
    assert by_pred["runs_on"].object == NameRef.of("kota")
    assert by_pred["kep_number"].object == LiteralValue("42", "integer")
    assert by_pred["ratio"].object == LiteralValue("0.25", "number")
    assert by_pred["active"].object == LiteralValue("true", "boolean")
    assert by_pred["born"].object == LiteralValue("1990-05-01", "date")
    assert by_pred["seen"].object == LiteralValue("2024-01-02T03:04:05+00:00", "datetime")
    fact = by_pred["kep_number"]
    assert fact == FactDraft(SELF, "kep_number", LiteralValue("42", "integer"),
                             fact.span, "kep-number: 42", "frontmatter")
    assert (fact.span.line_start, fact.span.line_end) == (4, 4)
    assert all(f.trust == "stated" and f.extractor_version == "1" for f in doc.facts)


def test_names_title_aliases_dedup_path_first() -> None:
    doc = parse("---\ntitle: Alice\naliases: [alice smith, Ali, ALI]\n---\n")
    assert doc.title == "Alice"
    assert doc.names == (
        NameDecl("people/alice smith", "people/Alice Smith", "path"),
        NameDecl("alice smith", "Alice Smith", "stem"),
        NameDecl("alice", "Alice", "title"),
        NameDecl("ali", "Ali", "alias"),
    )
    assert values(doc, "alias") == [LiteralValue("alice smith"), LiteralValue("Ali"),
                                    LiteralValue("ALI")]


def test_single_alias_string_and_root_note_names() -> None:
    doc = parse("---\nalias: Bob\n---\n", "Robert.md")
    assert doc.names == (NameDecl("robert", "Robert", "path"), NameDecl("bob", "Bob", "alias"))
    assert doc.title == "Robert"


def test_tags_as_list_or_string_and_hash_dropped() -> None:
    assert values(parse("---\ntags: [a, '#b']\n---\n"), "tag") == [
        LiteralValue("a"), LiteralValue("b")]
    assert values(parse("---\ntags: 'x, #y z'\n---\n"), "tag") == [
        LiteralValue("x"), LiteralValue("y"), LiteralValue("z")]
    assert values(parse("---\ntag: solo\n---\n"), "tag") == [LiteralValue("solo")]


def test_type_fact_and_doc_type() -> None:
    doc = parse("---\ntype: person\n---\n")
    assert doc.doc_type == "person"
    assert values(doc, "type") == [LiteralValue("person")]
    assert parse("---\ntipo: progetto\n---\n").doc_type == "progetto"


def test_lists_nested_mappings_and_wikilinks() -> None:
    doc = parse(
        "---\n"
        "owner:\n"
        "  team: platform\n"
        "  lead: \"[[Bob]]\"\n"
        "related:\n"
        "  - \"[[A]]\"\n"
        "  - \"see [[B|bee]] and [[C#x]]\"\n"
        "  - [[D]]\n"
        "ports: [80, 443]\n"
        "---\n"
    )
    assert values(doc, "owner_team") == [LiteralValue("platform")]
    assert values(doc, "owner_lead") == [NameRef.of("Bob")]
    assert values(doc, "related") == [NameRef.of(x) for x in "ABCD"]
    assert values(doc, "ports") == [LiteralValue("80", "integer"), LiteralValue("443", "integer")]
    owner = next(f for f in doc.facts if f.predicate == "owner_team")
    assert (owner.span.line_start, owner.span.line_end) == (2, 4)
    assert owner.supporting_text == "owner:"
    # a block list's items cite their own lines; a flow list cites its key's line
    related = [(f.span.line_start, f.span.line_end, f.supporting_text)
               for f in doc.facts if f.predicate == "related"]
    assert related == [(6, 6, '- "[[A]]"'), (7, 7, '- "see [[B|bee]] and [[C#x]]"'),
                       (7, 7, '- "see [[B|bee]] and [[C#x]]"'), (8, 8, "- [[D]]")]
    assert {(f.span.line_start, f.supporting_text) for f in doc.facts
            if f.predicate == "ports"} == {(9, "ports: [80, 443]")}


def test_block_list_items_span_their_lines_and_aliases_cite_the_key() -> None:
    doc = parse(
        "---\n"
        "base: &b shared\n"
        "owners:\n"  # read as owner (the key table)
        "  - name: Ann\n"
        "    team: \"[[Ops]]\"\n"
        "\n"
        "  # a comment\n"
        "  - name: Bo\n"
        "aliased:\n"
        "  - *b\n"
        "  - other\n"
        "---\n"
    )
    spans = {(f.predicate, f.span.line_start, f.span.line_end, f.supporting_text)
             for f in doc.facts}
    assert ("owner_name", 4, 5, "- name: Ann") in spans
    assert ("owner_team", 4, 5, "- name: Ann") in spans
    assert ("owner_name", 8, 8, "- name: Bo") in spans
    # an alias item is the anchored node, whose lines are the other key's: cite the key
    assert {s for s in spans if s[0] == "aliased"} == {("aliased", 9, 11, "aliased:")}
    assert values(doc, "aliased") == [LiteralValue("shared"), LiteralValue("other")]


def test_multilingual_keys() -> None:
    doc = parse(
        "---\n"
        "titolo: Servizio\n"
        "ruolo: Sviluppatrice\n"
        "Rolle: Entwicklerin\n"
        "rôle: développeuse\n"
        "squadra: Piattaforma\n"
        "Eigentümer: \"[[Team A]]\"\n"
        "propietario: Ana\n"
        "estado: activo\n"
        "Datum: 2024-05-01\n"
        "dipende_da: \"[[DB]]\"\n"
        "Teil von: \"[[Plattform]]\"\n"
        "läuft-auf: \"[[kota]]\"\n"
        "Standort: Berlin\n"
        "étiquettes: [a]\n"
        "---\n"
    )
    assert doc.title == "Servizio"
    preds = [f.predicate for f in doc.facts]
    assert preds == ["role", "role", "role", "team", "owner", "owner", "status", "date",
                     "depends_on", "part_of", "runs_on", "located_at", "tag"]


def test_title_falls_back_to_the_opening_h1_then_the_file_name() -> None:
    assert parse("\n# Kestrel Queue #\n\nText.\n").title == "Kestrel Queue"
    assert parse("Intro first.\n\n# Later heading\n").title == "Alice Smith"
    assert parse("## Only a section\n").title == "Alice Smith"
    doc = parse("---\ntitle: From YAML\n---\n# From H1\n")
    assert doc.title == "From YAML"
    assert {n.kind for n in parse("# Kestrel Queue\n").names} == {"path", "stem", "title"}


def test_comments_before_the_opening_h1_and_a_setext_h1() -> None:
    # a KEP: the template's instructions in a comment, then "# KEP-2322: Suspend Jobs"
    assert parse("<!--\n- [x] Pick a SIG.\n-->\n\n# KEP-2322: Suspend Jobs\n").title == (
        "KEP-2322: Suspend Jobs")
    assert parse("%% draft %%\n<!-- toc -->\n# Kestrel Queue\n").title == "Kestrel Queue"
    assert parse("Kestrel Queue\n=============\n\nText.\n").title == "Kestrel Queue"
    # a comment is not a heading, and text beside a comment is content
    assert parse("<!-- # Hidden -->\n\nIntro.\n").title == "Alice Smith"
    assert parse("Intro <!-- c -->\n# Later\n").title == "Alice Smith"
    assert parse("`code`\n# Later\n").title == "Alice Smith"  # code is shown: content


def test_an_untitled_folder_page_is_labelled_by_its_folder() -> None:
    assert parse("Text.\n", "keps/sig-apps/2232-suspend-jobs/README.md").title == (
        "2232-suspend-jobs")
    assert parse("Text.\n", "docs/guide/index.md").title == "guide"
    assert parse("Text.\n", "content/posts/_index.md").title == "posts"
    assert parse("Text.\n", "README.md").title == "README"  # the vault's own page
    assert parse("# Guide\n", "docs/guide/index.md").title == "Guide"  # a title wins
    # only a label: links by the folder's name resolve as before (to nothing here)
    assert [n.text for n in parse("Text.\n", "docs/guide/index.md").names] == [
        "docs/guide/index", "index"]


def test_malformed_yaml_is_a_warning_and_the_body_still_counts() -> None:
    text = "---\ntitle: ok\nkey: [unclosed\nother: 1\n---\n# Body\nUses [[Tool]]. #tag\n"
    doc = parse(text)
    (issue,) = doc.issues
    assert not issue.fatal
    assert issue.reason.startswith("malformed YAML frontmatter: ")
    assert issue.line == 3  # where the list opens, not line 4 where the parser gave up
    # the frontmatter yields nothing, not even its title: the opening "# Body" names it
    assert doc.title == "Body"
    assert {f.predicate for f in doc.facts} == {"uses", "tag"}
    assert doc.chunks[0].span.line_start == 6


def test_malformed_yaml_line_of_a_bad_indent() -> None:
    doc = parse("---\na: 1\nb: 2\n  c: 3\n---\n")
    (issue,) = doc.issues
    assert issue.line == 4 and issue.reason.startswith("malformed YAML frontmatter: ")


def test_an_unclosed_flow_list_or_map_is_reported_where_it_opens() -> None:
    for text, line in (("---\ntitle: [unclosed\n---\nbody\n", 2),
                       ("---\na: 1\nb: {x: 1\nc: 2\n---\n", 3)):
        (issue,) = parse(text).issues
        assert issue.line == line and "did not find expected" in issue.reason


def test_frontmatter_not_a_mapping() -> None:
    doc = parse("---\n- a\n- b\n---\ntext\n")
    assert doc.issues == (Issue("people/Alice Smith.md", "frontmatter is not a mapping", 2,
                                False),)
    assert doc.facts == ()


def test_one_bad_value_costs_only_its_key() -> None:
    doc = parse("---\nwhen: 2024-02-30\nok: yes\n---\n")
    assert [f.predicate for f in doc.facts] == ["ok"]
    (issue,) = doc.issues
    assert issue.line == 2 and not issue.fatal


def test_alias_bomb_stays_bounded() -> None:
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    lines.append("---")
    doc = parse("\n".join(lines) + "\n")
    assert len(doc.facts) < 20


def test_recursive_anchor_does_not_crash() -> None:
    doc = parse("---\nloop: &l [1, *l]\n---\n")
    assert values(doc, "loop") == [LiteralValue("1", "integer")]


def test_merge_keys() -> None:
    doc = parse("---\nbase: &b {team: x}\nsvc:\n  <<: *b\n  port: 8\n---\n")
    assert values(doc, "svc_team") == [LiteralValue("x")]
    assert values(doc, "svc_port") == [LiteralValue("8", "integer")]


def test_top_level_merge_keys_cite_lines_in_order() -> None:
    # "<<: *b" puts the anchor's keys first in the mapping; they sit on the anchor's lines
    doc = parse("---\nbase: &b\n  owner: Ann\n  team: x\ntitle: M\n<<: *b\n---\n")
    spans = {f.predicate: (f.span.line_start, f.span.line_end) for f in doc.facts}
    assert spans["team"] == (4, 4) and spans["owner"] == (3, 3)
    assert all(a <= b for a, b in spans.values())
