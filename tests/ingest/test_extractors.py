"""The per-block extractors: registered objects, run in order, sharing the block's claims."""

from __future__ import annotations

from knotwork.ingest.extract import (
    BLOCK_EXTRACTORS,
    BlockContext,
    Extractor,
    Sink,
    extract_facts,
)
from knotwork.ingest.frontmatter import read_frontmatter
from knotwork.ingest.markdown import blocks_of, parse_markdown, scan_body, split_lines
from knotwork.types import ParsedDocument

NOTE = ("# Web\n\n## Dependencies\n\n- uses [[Redis]]\n- [[Postgres]] and [[Kafka]]\n"
        "- [risk] Disk fills #ops\n\nrole:: [[Ada]]\n\nIt runs on [[Host A]]. See [[Docs]].\n")


def _facts(text: str, extractors: tuple[Extractor, ...] | None = None
           ) -> set[tuple[str, str, str]]:
    lines = split_lines(text)
    front = read_frontmatter("web.md", lines)
    scanned, references, _ = scan_body(lines, front.body_start)
    blocks = blocks_of(lines, front.body_start, scanned)
    facts, _ = extract_facts("web.md", front.entries, blocks, references,
                             extractors=extractors)
    return {(f.predicate, _label(f.object), f.extractor) for f in facts}


def _label(obj: object) -> str:
    return str(getattr(obj, "value", None) or getattr(obj, "text", None) or obj)


def test_the_six_rules_run_in_the_order_they_claim_links() -> None:
    assert [e.name for e in BLOCK_EXTRACTORS] == [
        "inline_field", "tag", "observation", "list_relation", "section_list",
        "sentence_links"]
    assert all(isinstance(e.version, str) and e.version for e in BLOCK_EXTRACTORS)


def test_the_default_rules_give_what_the_parser_gives() -> None:
    doc = parse_markdown("web.md", NOTE.encode())
    assert isinstance(doc, ParsedDocument)
    assert _facts(NOTE) == {(f.predicate, _label(f.object), f.extractor) for f in doc.facts}
    assert _facts(NOTE, BLOCK_EXTRACTORS) == _facts(NOTE)


def test_a_link_an_earlier_rule_claims_is_no_later_rules() -> None:
    facts = {(p, e) for p, _, e in _facts(NOTE)}
    assert ("uses", "list_relation") in facts  # "- uses [[Redis]]": not the section's
    assert ("depends_on", "section_list") in facts
    without_list = tuple(e for e in BLOCK_EXTRACTORS if e.name != "list_relation")
    redis = {(p, e) for p, o, e in _facts(NOTE, without_list) if "Redis" in o}
    assert ("uses", "list_relation") not in redis and redis  # the sentence took it instead
    only_links = tuple(e for e in BLOCK_EXTRACTORS if e.name == "sentence_links")
    kept = {p for p, _, _ in _facts(NOTE, only_links)}
    assert "runs_on" in kept and not kept & {"depends_on", "role", "observation", "tag"}


class _Shout:
    """A third-party rule: every block's first word in capitals as a ``shout``."""

    name, version = "shout", "1"

    def __init__(self) -> None:
        self.claimed: list[set[int]] = []

    def extract(self, block: BlockContext, sink: Sink) -> None:
        self.claimed.append(set(block.consumed))
        word = block.text.split(None, 1)[0].strip("-[#") if block.text.strip() else ""
        if word.isupper():
            from knotwork.types import LiteralValue

            block.add(0, "shout", LiteralValue(word), self.name)


def test_an_added_rule_runs_after_the_others_and_sees_their_claims() -> None:
    shout = _Shout()
    facts = _facts("# N\n\nLOUD [[X]] here\n\n- uses [[Y]]\n", (*BLOCK_EXTRACTORS, shout))
    assert ("shout", "LOUD", "shout") in facts
    assert {0} in shout.claimed  # "- uses [[Y]]": list_relation claimed its one link
