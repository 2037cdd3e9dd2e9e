"""The rules numbers move with what parsing makes of a file and what mentions it holds.

A sync reads again every note extracted under another ``EXTRACTION_RULES``, and finds all
mentions again under another ``MENTION_RULES`` (see ``tests/sync/test_reread.py``), so a
change to the parser or the mention finder that leaves its number as it was would leave
every unchanged note's old facts in the store. These tests fail on such a change: when
one does, raise the number in ``knotwork/ingest/__init__.py`` and record the fingerprint
it prints under the new number.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from knotwork import Knotwork
from knotwork.ingest import EXTRACTION_RULES, MENTION_RULES, extraction_key, parse_markdown
from knotwork.ingest.hierarchy import with_folders
from knotwork.types import ParsedDocument

from ..sync.test_no_stale import canon

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"

# What parsing made of the corpus below, by rules number (an earlier number's entry is a
# record, made on the corpus of its day: a sample added since changes every fingerprint).
FINGERPRINTS = {
    1: "6e059310c696b00a0de47dd9bf3499ed96986fd2462ba07afc9bbf4ca5984a25",
    2: "a825af9cd05273a99529d511d5afc098af8586a981e8227ba106f827659f53bd",
    3: "670fc06de7c37dbdebd28c8fd0a8a851cc2ef97f8e0fc931602246064355f0d6",
    4: "47d649c34511b551cdb8c62dfe673f88779ef027ab37f958883ae704f5008a36",
    5: "aa6315792766d17274d7d42e021ede75304b59dfa35e79b2dbdd64b720165b5b",
    6: "34458a7b216d49ac1088b03ccae5129eb152c26d19deaf2f57f77f9f1f376e19",
    7: "83e53043899562796877dc6cd545079c291d9853195904617d6846d2eb098d8a",
    8: "02aa8e25168e54effa4e6ffad66c74f6bba534566945a3dc627e5ba1b6f5ed2e",
    9: "cbd15f028dcc2944d2e4e0c648915a824a77ca926b7659054dd07b443e0089b3",
    10: "9eb8b4f20e9556a7b987ffbde74a22aa1302ba6068fc5ca744883a7502b7bc01",
    11: "134a723d68b4224b98bbe9d98414271386b384fd6c4da4beb4501bf8e75e019e",
    12: "419a11034b5be97f0877bb7e5dad30a75226fa6f215b9fbd9afdf15c488fa12e",
    13: "b2e97d642ffbe1040292039c78826780b868fc30b100628809bf46442fe3b3d0",
    14: "1386d82df5fc6570570143276bf67710b2dc0a58e224136a5d6d7389d28a8aad",
    15: "548cc789427e9e10f91534c894a67265d36c323cbe9c90f189688c3ef0444790",
    16: "95fe8bf9bb9aac32d51fdf10856637110a1e7ac416a4362a619a7f12c2da5eb5",
    17: "7e9dbf65e4a6e23f1661e1b2fa0ccd771e3c326abb2bd3a9036ef91e8551c158",  # valid time
    18: "ae3e05b7afbd1f894448c032d501fa4d532875df3948a80f8472f296ad307df3",  # + vault dialects
    # + folder pages (``hierarchy.with_folders``, counted from here on)
    19: "ad2d5a271b6ac04e52fc700d800c79c5549f61bcc875be8dbfe421c5afcac1db",
}

# The mention facts of the same corpus, by (extraction rules, mention rules): a parser
# change alone changes them too (other chunks), and needs no new mention rules.
MENTION_FINGERPRINTS = {
    (1, 1): "aedf8ed9528cc7b23cd4b4d6d3a732239dcb3c275ff06f0601c609284fa280ba",
    (2, 1): "300e8e7b095366d8179fe910675fe073169f62c23f909244aad4cf869f16387a",
    (2, 2): "2ad2a95cce4245e3e82ac2303da68d43a78b6e5a8af47d1ff229d3e67614b81f",
    (3, 2): "2ad2a95cce4245e3e82ac2303da68d43a78b6e5a8af47d1ff229d3e67614b81f",
    (4, 2): "2ad2a95cce4245e3e82ac2303da68d43a78b6e5a8af47d1ff229d3e67614b81f",
    (5, 2): "2ad2a95cce4245e3e82ac2303da68d43a78b6e5a8af47d1ff229d3e67614b81f",
    (6, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (7, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (8, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (9, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (10, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (11, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (12, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (13, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (14, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (15, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (16, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (17, 2): "c99243a18adfd7a901a0ccd915caf8e22db258407905f5affc62811e862850c4",
    (17, 3): "2c6df93040db8622cc94c69ec03f7d34e4169f128ea2c73129c7185ff6a67a39",
    (18, 3): "2c6df93040db8622cc94c69ec03f7d34e4169f128ea2c73129c7185ff6a67a39",
    # one common word names a note only as a name is written; section names of RFCs
    (18, 4): "1fce966c047557aca7e7fe18df393f792ee8adcabd7e51416a479d7eaa0585e9",
    (19, 3): "2c6df93040db8622cc94c69ec03f7d34e4169f128ea2c73129c7185ff6a67a39",
    (19, 4): "1fce966c047557aca7e7fe18df393f792ee8adcabd7e51416a479d7eaa0585e9",
    # + a second scope's notes, which mention their own scope's notes only
    (19, 5): "b14ceed86dd1c4998f934dd68b45c1bd158ea692161f09a751f9d0f3ebeba5b7",
}

# Beside the example vault: the syntax it does not show, each in a few lines.
SAMPLES = {
    "refs.md": "This RFC replaces [RFC 593] and [the old one][old].\n\n"
               "[rfc 593]: 0593-x.md\n[old]: <old plan.md> \"title\"\n",
    "table.md": "| a | b |\n|---|---|\n| Web runs on [[Host A]] | x |\n",
    "fields.md": "Owner:: [[Ada]]\nStatus:: active\nA line with [due:: 2026-01-01] inside.\n"
                 "title:: Fields\n",
    "task.md": "---\nstatus: active\n---\n# F\n\n## TASK-9: Ship\n\nwave:: 3\n\n"
               "### Status\n\nBlocked\n\n## REL-1.2 notes\n\nwave:: 4\n",
    "kep-1.md": "# KEP-1:Tight\n\nText.\n",
    "lists.md": "- depends_on [[Queue]] (for jobs)\n- [risk] slow disks #ops (seen twice)\n"
                "  - nested item links [[Deep]]\n",
    "code.md": "```\n[[not a link]]\n```\nInline `[[nor this]]` but [[this]].\n"
               "<!-- [[hidden]] -->\n",
    "crlf.md": "\ufeff---\r\ntitle: Windows\r\ntags: [a, b]\r\n---\r\nUses [[Tool]].\r\n",
    "bad-front.md": "---\ntitle: [unclosed\n---\nBody still links [[Here]].\n",
    "sentences.md": "First fact, e.g. a note. It works with [[Partner]]. Then #tagged here.\n",
    "long.md": "# Long\n\n" + " ".join(f"word{i} [[N{i}]]." for i in range(400)) + "\n",
    "abstract.md": "# Abstract\n\n" + " ".join(f"term{i}" for i in range(200)) + "\n",
    "essay.md": "# Essay\n\n" + " ".join(f"term{i}" for i in range(600)) + "\n",
    "multi.md": "Il servizio gira su [[Server]]. Der Dienst hängt ab von [[Datenbank]].\n"
                "Le service dépend de [[Base]]. El equipo usa [[Herramienta]].\n",
    "mentions.md": "# Mentions\n\nThe Runbook says Web first; `Web` in code does not.\n\n"
                   "[Refs][r] and [[Fields]] too.\n\n[r]: <refs.md>\n[t]: <Traefik notes.md>\n"
                   "[page]: https://example.org/web\n\n| edge | runs behind Traefik |\n",
    "adr-head.md": "# 7. Use queues\n\nDate: 2020-01-02\n\n## Status\n\n"
                   "Superseded by [[Queue]]\n\n## Context\n\nText.\n",
    "adr-amended.md": "# 10. Layout\n\n## Status\n\nAccepted\n\nAmended by [[ADR-17]]\n",
    "keps/42/README.md": "# KEP-42: Queues for all\n\nWe also cite KEP-7.\n",
    "keps/7/README.md": "# KEP-7: Older plan\n\nKEP-42 replaces this plan.\n",
    "rfc-head.md": "- Feature Name: `queues`\n- Start Date: 2020-01-01\n"
                   "- RFC PR #: [org/rfcs#7](https://example.org/7)\n\n## Summary\n\nText.\n",
    # a title after the template's comment; an untitled folder page; a Setext title
    "keps/9/README.md": "<!--\n- [x] **Pick a hosting SIG.**\n-->\n# KEP-9: Commented\n\nText.\n",
    "docs/guide/index.md": "An untitled page of [[Queue]].\n",
    "setext.md": "Setext Title\n============\n\nText.\n",
    "sections.md": "# S\n\n## Dependencies\n\n- [[Queue]] and [[Ada]]\n\n## Owners\n\n"
                   "- [[Ada]]\n- [[Lena Vogt]]\n",
    "code-first.md": "`status: draft`\n# Not a title: code came first\n",
    "template.md": "# T\n\n## Goals\n\n<!--\nList the goals.\n-->\n\n## Risks\n\nFew.\n",
    "chain.md": "# Chain\n\n## Proposal\n\n### User Stories\n\n#### Story 1\n\nText.\n",
    # a section over the budget whose greedy cut would leave the link definition alone
    "tail.md": "## Goals\n\n" + "goal " * 100 + "\n\n" + "more " * 72 + "[plan]\n\n"
               "[plan]: https://example.org/plan\n",
    # a name inside a web address is no mention; the one in prose after it is
    "web.md": "Docs: https://doc.traefik.io/traefik/ (also traefik.io).\n\n"
              "Traefik runs the edge.\n",
    # Dendron's stamps and a link into another vault, read the same in every dialect
    "dendron.topic.md": "---\ncreated: 1608240000000\n---\n"
                        "See [[label|dendron://site/dendron.topic.lookup#h,1]].\n",
}


def _corpus() -> list[tuple[str, bytes]]:
    files = [(p.relative_to(VAULT).as_posix(), p.read_bytes())
             for p in sorted(VAULT.rglob("*.md"))]
    return files + [(name, text.encode()) for name, text in SAMPLES.items()]


def fingerprint() -> str:
    """A hash of everything parsing makes of the corpus but the rules' own key."""
    digest = hashlib.sha256()
    for path, data in _corpus():
        doc = parse_markdown(path, data)
        if isinstance(doc, ParsedDocument):  # and what its folder states (``parsers.parse``)
            doc = with_folders(doc, "markdown")
        out = (dataclasses.asdict(dataclasses.replace(doc, extraction=""))
               if isinstance(doc, ParsedDocument) else dataclasses.asdict(doc))
        digest.update(json.dumps(out, sort_keys=True, default=repr).encode())
    return digest.hexdigest()


def test_the_rules_number_moves_with_the_parser_output() -> None:
    got = fingerprint()
    assert FINGERPRINTS.get(EXTRACTION_RULES) == got, (
        f"parsing makes something else of the same files than rules {EXTRACTION_RULES}"
        " recorded: if that is meant, raise EXTRACTION_RULES in knotwork/ingest/__init__.py"
        f" and record {got!r} under the new number in FINGERPRINTS")


def test_every_recorded_number_made_other_output() -> None:
    # a number raised without a change would make every store read its vault again for
    # nothing
    values = list(FINGERPRINTS.values())
    assert len(set(values)) == len(values)
    for rules in FINGERPRINTS:
        values = [v for (e, _), v in MENTION_FINGERPRINTS.items() if e == rules]
        assert len(set(values)) == len(values)


def mention_fingerprint(root: Path) -> str:
    """A hash of the mention facts a sync finds in the corpus, and in two notes synced
    beside it into a second scope, which name the corpus's notes and one of their own (a
    scope's notes mention its own notes only: from ``MENTION_RULES`` 5 on)."""
    other = [("elsewhere.md", b"# Elsewhere\n\nLena Vogt runs Traefik on the Orion Rack.\n"),
             ("orion rack.md", b"# Orion Rack\n\nA rack.\n")]
    for vault, files in ((root / "v", _corpus()), (root / "w", other)):
        for path, data in files:
            (vault / path).parent.mkdir(parents=True, exist_ok=True)
            (vault / path).write_bytes(data)
    with Knotwork.open(root / "v", db=str(root / "s.db"), embedder="none", workers=1) as kw, \
            Knotwork.open(root / "w", db=str(root / "s.db"), embedder="none", workers=1,
                          scope="other") as other:
        kw.ingest()
        other.ingest()
        found = sorted((canon(f) for f in kw.store.reader.live_facts()
                        if f.extractor == "mention"), key=repr)
    assert found  # the corpus holds mentions to count
    return hashlib.sha256(repr(found).encode()).hexdigest()


def test_the_mention_rules_number_moves_with_the_mentions_found(tmp_path: Path) -> None:
    got = mention_fingerprint(tmp_path)
    assert MENTION_FINGERPRINTS.get((EXTRACTION_RULES, MENTION_RULES)) == got, (
        f"the mentions found in the same files differ from what rules ({EXTRACTION_RULES},"
        f" {MENTION_RULES}) recorded: if the parser changed, raise EXTRACTION_RULES; if only"
        " the mention finder did, raise MENTION_RULES (knotwork/ingest/__init__.py); then"
        f" record {got!r} under the new pair in MENTION_FINGERPRINTS")


def test_the_key_holds_the_rules_the_chunk_size_and_taught_phrases(
        taught_relation: None) -> None:
    plain = f"{EXTRACTION_RULES}/220"
    from knotwork.ingest import lexicon

    assert extraction_key(220) == plain

    lexicon.register_relation("en", "is guarded by", "guarded_by")
    key = extraction_key(220)
    assert key.startswith(plain + "/") and len(key) > len(plain) + 1
    assert extraction_key(100).startswith(f"{EXTRACTION_RULES}/100/")
    assert parse_markdown("a.md", b"x").extraction == key  # type: ignore[union-attr]
