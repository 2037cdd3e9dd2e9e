"""Body links and tags: what counts, what code and comments hide, where it came from."""

from __future__ import annotations

from knotwork.ingest import parse_markdown
from knotwork.types import SELF, FactDraft, Issue, LiteralValue, NameRef, ParsedDocument, Span


def parse(text: str, path: str = "notes/Note.md") -> ParsedDocument:
    doc = parse_markdown(path, text.encode())
    assert isinstance(doc, ParsedDocument), doc
    return doc


def targets(doc: ParsedDocument, predicate: str = "links_to") -> list[str]:
    return [f.object.text for f in doc.facts  # type: ignore[union-attr]
            if f.predicate == predicate]


def tags(doc: ParsedDocument) -> list[str]:
    return [f.object.value for f in doc.facts  # type: ignore[union-attr]
            if f.predicate == "tag"]


def test_wikilink_forms() -> None:
    doc = parse(
        "[[Plain]] [[Aliased|shown text]] [[Head#Section]] [[Block#^abc]] [[Caret^blk]]\n"
        "[[ spaced   name ]] [[folder/Deep Note]] [[Note.md]]\n"
    )
    assert targets(doc) == ["Plain", "Aliased", "Head", "Block", "Caret", "spaced name",
                            "folder/Deep Note", "Note.md"]
    deep = next(f for f in doc.facts if f.object.key == "folder/deep note")  # type: ignore[union-attr]
    assert deep.object == NameRef("folder/deep note", "folder/Deep Note")


def test_plain_link_fact_shape() -> None:
    doc = parse("intro\n\nA line with [[Target]] in it.\n")
    assert doc.facts == (
        FactDraft(SELF, "links_to", NameRef.of("Target"), Span(3, 3),
                  "A line with [[Target]] in it.", "wikilink", "1", 1.0,
                  column=12),  # where in its line the link starts
    )


def test_same_note_links_yield_nothing() -> None:
    assert parse("See [[#Heading]] and [[#^block]] and [[|x]].\n").facts == ()


def test_embeds() -> None:
    doc = parse("![[diagram.png]]\n![[Other Note#Part]] and [[Linked]]\n")
    assert targets(doc, "embeds") == ["diagram.png", "Other Note"]
    assert targets(doc) == ["Linked"]
    assert all(f.extractor == "wikilink" for f in doc.facts)


def test_table_escaped_alias_bar() -> None:
    doc = parse("| a | b |\n|---|---|\n| [[Target\\|alias]] | [[Other\\|o]] |\n")
    assert targets(doc) == ["Target", "Other"]
    assert {f.span.line_start for f in doc.facts} == {3}


def test_fenced_code_hides_links_and_tags() -> None:
    doc = parse(
        "```python\n[[not a link]] #notatag\n```\n"
        "~~~\n[[tilde]] #tilde\n```\n[[still code]]\n~~~\n"
        "````md\n```\n[[nested fence]]\n```\n````\n"
        "after [[Real]] #real\n"
    )
    assert targets(doc) == ["Real"]
    assert tags(doc) == ["real"]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert parse("[[A]]\n```\n[[B]]\n").facts[0].object == NameRef.of("A")
    assert len(parse("[[A]]\n```\n[[B]]\n").facts) == 1


def test_fence_in_a_list_and_in_a_quote() -> None:
    doc = parse("- item\n    ```\n    [[in list code]]\n    ```\n> ```\n> [[quoted code]]\n> ```\n")
    assert doc.facts == ()


def test_headings_inside_code_are_not_headings() -> None:
    doc = parse("# Real\n```\n# Not a heading\n```\ntext\n")
    assert [c.heading_path for c in doc.chunks] == [("Real",)]


def test_indented_code_after_blank_line_but_not_in_lists() -> None:
    doc = parse(
        "para\n\n    [[indented code]] #nope\n\n"
        "- item\n\n    [[list continuation]]\n"
        "- nested:\n    - uses [[Nested]]\n"
    )
    assert "indented code" not in targets(doc)
    assert "nope" not in tags(doc)
    assert "list continuation" in targets(doc)
    assert targets(doc, "uses") == ["Nested"]


def test_indented_lines_in_a_paragraph_are_not_code() -> None:
    assert targets(parse("para\n    [[Lazy]]\n")) == ["Lazy"]


def test_inline_code_spans() -> None:
    doc = parse("a `[[code]] #c` b ``x [[double `tick`]] y`` c [[Real]] ` unmatched [[Too]]\n")
    assert targets(doc) == ["Real", "Too"]
    assert tags(doc) == []


def test_html_and_obsidian_comments() -> None:
    doc = parse(
        "a <!-- [[hidden]] --> [[Shown]]\n"
        "<!--\n[[multi]]\n# not a heading\n-->\n"
        "%% [[obs]] %% [[Visible]]\n"
        "%%\n[[obs multi]] #no\n%%\n"
        "end [[Last]]\n"
    )
    assert targets(doc) == ["Shown", "Visible", "Last"]
    assert tags(doc) == []
    assert [c.heading_path for c in doc.chunks] == [()]


def test_relative_markdown_links() -> None:
    doc = parse(
        "[a](Sibling.md) [b](../ops/Kota.md#anchor) [c](<sub dir/My Note.md>)\n"
        "[d](sub%20dir/Other%20Note.md) [e](./x/../Y.md \"title\") [f](/Root.md)\n"
        "[web](https://example.com/a.md) [mail](mailto:a@b.c) [anchor](#frag)\n"
        "[pdf](file.pdf) ![img](pic.md) [[Wiki]]\n",
        path="services/web/Traefik.md",
    )
    assert targets(doc) == [
        "services/web/Sibling", "services/ops/Kota", "services/web/sub dir/My Note",
        "services/web/sub dir/Other Note", "services/web/Y", "Root", "Wiki",
    ]
    assert {f.extractor for f in doc.facts} == {"mdlink", "wikilink"}
    kota = next(f for f in doc.facts if "Kota" in f.object.text)  # type: ignore[union-attr]
    assert kota.object == NameRef("services/ops/kota", "services/ops/Kota")


def test_link_escaping_the_vault_is_a_warning() -> None:
    doc = parse("ok\n[out](../../Secret.md) and [in](../Fine.md)\n", path="a/Note.md")
    assert targets(doc) == ["Fine"]
    assert doc.issues == (Issue("a/Note.md", "link escapes the vault: ../../Secret.md", 2,
                                fatal=False),)


def test_body_tags() -> None:
    doc = parse(
        "#start text #nested/tag #with-dash_and_underscore (#paren) #123 #1a\n"
        "x#glued http://h/#frag [a](#frag) [[Note#Heading]] \\#escaped #ünïcödé\n"
        "# Heading #intitle\n"
    )
    assert tags(doc) == ["start", "nested/tag", "with-dash_and_underscore", "paren", "1a",
                         "ünïcödé", "intitle"]
    assert [f.span.line_start for f in doc.facts if f.predicate == "tag"] == [1] * 5 + [2, 3]


def test_duplicates_keep_the_first_span() -> None:
    doc = parse("---\ntags: [dup]\n---\n[[A]] and [[A]]\n\n[[a]] #dup #dup\n")
    assert targets(doc) == ["A"]
    assert doc.facts[0].predicate == "tag" and doc.facts[0].span == Span(2, 2)
    link = next(f for f in doc.facts if f.predicate == "links_to")
    assert link.span == Span(4, 4)
    assert len(doc.facts) == 2


def test_literal_tag_value() -> None:
    assert parse("#x\n").facts[0].object == LiteralValue("x")


def test_a_long_lines_facts_keep_the_part_around_their_link() -> None:
    # each of 300 links on one 40 KB line kept the whole line: 12 MB for one note
    filler = " ".join(f"word{i}" for i in range(20))
    line = " ".join(f"{filler} [[T{i}]]" for i in range(300))
    tags = "tags: [" + ", ".join(f"t{i}" for i in range(400)) + "]"
    doc = parse(f"---\n{tags}\n---\n# Big\n\n{line}\n\nOwns [[Short]] here.\n")
    links = {f.object.key: f for f in doc.facts if isinstance(f.object, NameRef)}
    assert len(links) == 301
    for key, f in links.items():
        assert len(f.supporting_text) <= 602, key
        assert f"[[{f.object.text}]]" in f.supporting_text[:160], key  # what answers quote
    assert links["short"].supporting_text == "Owns [[Short]] here."  # short lines whole
    assert all(len(f.supporting_text) <= 602 for f in doc.facts if f.predicate == "tag")


def test_a_bracketed_citation_linking_a_url_is_no_wikilink() -> None:
    # rust_rfcs/text/2169-euclidean-modulo.md:16 and k8s KEP 2718's README:185 cite
    # sources as "[[3]](https://…)": a Markdown link whose text is "[3]", not a note "3".
    # "[[X]](y.md)" still reads as the wikilink, and a plain "[[3]]" is a link to "3".
    doc = parse("often requested[[3]](https://mail.example.org/a.html)[[4]](https://x.org/b).\n"
                "The [[전문]](https://example.org/t.md#motivation) text.\n"
                "[[Note]](other.md) and [[3]] alone.\n")
    assert targets(doc) == ["Note", "3"]


def test_heading_attributes_are_no_tags() -> None:
    # rust_rfcs/text/0048-traits.md:29 "#### Poor interaction … { #overload }": a
    # Pandoc/kramdown heading id, not a tag ("{#id}" without blanks was already none)
    doc = parse("#### Poor interaction with deref { #overload }\n"
                "## Alternatives {  #alternatives .unnumbered }\n"
                "Text {#glued} and a real #tag.\n")
    assert tags(doc) == ["tag"]


def test_reference_links_in_all_three_forms() -> None:
    doc = parse(
        "Builds on [the UFCS work][ufcs], [Other][] and [Plain].\n"
        "Labels match [ THE   ufcs WORK ][UFCS] and [plain] whatever their case.\n"
        "\n"
        "[ufcs]: 0132-ufcs.md 'UFCS'\n"
        "[other]: <sub dir/Other Note.md>\n"
        "[Plain]: ./x/../Plain.md\n",
        path="text/0255-object-safety.md",
    )
    assert targets(doc) == ["text/0132-ufcs", "text/sub dir/Other Note", "text/Plain"]
    assert {f.extractor for f in doc.facts} == {"mdlink"}
    # cited where the link is used, not where its label is defined
    assert {f.span for f in doc.facts} == {Span(1, 1)}


def test_reference_links_only_for_defined_labels() -> None:
    doc = parse(
        "[undefined] and [text][nowhere] are brackets; \\[ref] is escaped.\n"
        "[[ref]] is a wikilink, [ref](Inline.md) an inline link, ![pic][ref] an image.\n"
        "[web] is a page, [anchor] a heading of this note.\n"
        "\n"
        "[ref]: Target.md\n"
        "[ref]: Second.md\n"
        "[web]: https://example.com/a.md\n"
        "[anchor]: #section\n"
        "```\n"
        "[undefined]: Fenced.md\n"
        "```\n",
        path="Note.md",
    )
    assert targets(doc) == ["ref", "Inline"]
    # the first definition of a label counts, as CommonMark has it
    doc = parse("See [ref].\n\n[ref]: Target.md\n[REF]: Second.md\n")
    assert targets(doc) == ["notes/Target"]


def test_reference_links_infer_relations_and_report_escapes() -> None:
    doc = parse(
        "This RFC replaces [RFC 593].\n"
        "- depends on [RFC 593]\n"
        "- [RFC 593] is prior art\n"
        "It leaves through [out].\n"
        "\n"
        "[RFC 593]: 0593-forbid-Self.md\n"
        "[out]: ../../Secret.md\n",
        path="text/9999-plan.md",
    )
    facts = [(f.predicate, f.object.text, f.extractor) for f in doc.facts]  # type: ignore[union-attr]
    assert facts == [("replaces", "text/0593-forbid-Self", "mdlink"),
                     ("depends_on", "text/0593-forbid-Self", "list_relation"),
                     ("links_to", "text/0593-forbid-Self", "mdlink")]
    # a "- [label] text" item whose label is defined is a link, not an observation
    assert not [f for f in doc.facts if f.predicate == "observation"]
    assert doc.issues == (Issue("text/9999-plan.md", "link escapes the vault: ../../Secret.md",
                                4, fatal=False),)
