"""The extraction rules' number moves with what parsing makes of a file.

A sync reads again every note extracted under another ``EXTRACTION_RULES`` (see
``tests/sync/test_reread.py``), so a change to the parser that leaves the number as it was
would leave every unchanged note's old facts in the store. This test fails on such a
change: when it does, raise ``EXTRACTION_RULES`` in ``knotwork/ingest/__init__.py`` and
record the fingerprint it prints under the new number.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from knotwork.ingest import EXTRACTION_RULES, extraction_key, parse_markdown
from knotwork.types import ParsedDocument

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"

# What parsing made of the corpus below, by rules number.
FINGERPRINTS = {
    1: "25b8366aaa04e3ded6e0439149186e6c2839240b3d4171033b2637447d7fc1a9",
}

# Beside the example vault: the syntax it does not show, each in a few lines.
SAMPLES = {
    "refs.md": "This RFC replaces [RFC 593] and [the old one][old].\n\n"
               "[rfc 593]: 0593-x.md\n[old]: <old plan.md> \"title\"\n",
    "table.md": "| a | b |\n|---|---|\n| Web runs on [[Host A]] | x |\n",
    "fields.md": "Owner:: [[Ada]]\nStatus:: active\nA line with [due:: 2026-01-01] inside.\n",
    "lists.md": "- depends_on [[Queue]] (for jobs)\n- [risk] slow disks #ops (seen twice)\n"
                "  - nested item links [[Deep]]\n",
    "code.md": "```\n[[not a link]]\n```\nInline `[[nor this]]` but [[this]].\n"
               "<!-- [[hidden]] -->\n",
    "crlf.md": "\ufeff---\r\ntitle: Windows\r\ntags: [a, b]\r\n---\r\nUses [[Tool]].\r\n",
    "bad-front.md": "---\ntitle: [unclosed\n---\nBody still links [[Here]].\n",
    "sentences.md": "First fact, e.g. a note. It works with [[Partner]]. Then #tagged here.\n",
    "long.md": "# Long\n\n" + " ".join(f"word{i} [[N{i}]]." for i in range(400)) + "\n",
    "multi.md": "Il servizio gira su [[Server]]. Der Dienst hängt ab von [[Datenbank]].\n"
                "Le service dépend de [[Base]]. El equipo usa [[Herramienta]].\n",
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
