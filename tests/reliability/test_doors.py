"""The Python and CLI doors: the shared size limits, strict counts, the bind guard's token.

Fast, in process; the MCP and REST doors have their own tests in ``tests/frontends``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import Knotwork, limits
from knotwork.cli.main import app
from knotwork.errors import ConfigError, InvalidQuery
from knotwork.server import check_bind
from knotwork.server.guard import too_deep


@pytest.mark.parametrize("token", ["  ", "\t", "a", "short-token", " " + "x" * 20,
                                   "x" * 20 + "\n"])
def test_blank_short_or_padded_tokens_are_refused(token: str) -> None:
    with pytest.raises(ConfigError):
        check_bind("0.0.0.0", token)
    with pytest.raises(ConfigError):  # a weak token is refused on loopback too
        check_bind("127.0.0.1", token)


def test_a_long_token_binds_and_none_binds_only_loopback() -> None:
    check_bind("0.0.0.0", "x" * limits.TOKEN_MIN_CHARS)
    check_bind("127.0.0.1", None)
    with pytest.raises(ConfigError):
        check_bind("0.0.0.0", None)


def test_serve_refuses_a_blank_token_from_the_environment(tmp_path: Path) -> None:
    runner = CliRunner()
    for env in ({"KNOTWORK_TOKEN": "  "}, {"KNOTWORK_TOKEN": "a"}):
        r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "serve", "--host", "0.0.0.0"],
                          env=env)
        assert r.exit_code != 0 and "token" in r.output.lower(), r.output
    r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "serve", "--token", "a"])
    assert r.exit_code != 0 and "at least" in r.output


@pytest.fixture
def kw(tmp_path: Path) -> Knotwork:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "a.md").write_text("# A\n\nruns on [[B]]\n", encoding="utf-8")
    k = Knotwork.open(tmp_path / "v", db=str(tmp_path / "s.db"))
    k.ingest()
    return k


def test_the_facade_refuses_bools_for_counts_and_ids(kw: Knotwork) -> None:
    with kw:
        fact = kw.assert_fact("A", "port", "80")
        for call in (lambda: kw.context("a", max_entities=True),
                     lambda: kw.context("a", link_depth=True),
                     lambda: kw.context("a", max_tokens=True),
                     lambda: kw.search("a", k=True),
                     lambda: kw.retract_fact(True, reason="x"),
                     lambda: kw.retract_fact("1", reason="x")):  # type: ignore[arg-type]
            with pytest.raises(InvalidQuery):
                call()
        assert fact.id and all(f.retracted_at is None for f in kw.facts("A", history=True))


def test_the_facade_bounds_every_string_by_the_shared_limits(kw: Knotwork) -> None:
    L = limits
    with kw:
        calls = [
            lambda: kw.context("x" * (L.QUERY_CHARS + 1)),
            lambda: kw.search("x" * (L.QUERY_CHARS + 1)),
            lambda: kw.entity("x" * (L.REF_CHARS + 1)),
            lambda: kw.assert_fact("s" * (L.SUBJECT_CHARS + 1), "p", "v"),
            lambda: kw.assert_fact("s", "p" * (L.PREDICATE_CHARS + 1), "v"),
            lambda: kw.assert_fact("s", "p", "v" * (L.VALUE_CHARS + 1)),
            lambda: kw.assert_fact("s", "p", "v", reason="r" * (L.REASON_CHARS + 1)),
            lambda: kw.retract_fact(1, reason="r" * (L.REASON_CHARS + 1)),
            lambda: kw.ingest_document("d", "t" * (L.TITLE_CHARS + 1), "", "text"),
            lambda: kw.ingest_document("d", "t", "", "text",
                                       entities=[{"name": "n"}] * (L.ENTITIES_MAX + 1)),
            lambda: kw.ingest_document("d", "t", "", "text",
                                       entities=[{"name": "n" * (L.NAME_CHARS + 1)}]),
        ]
        for call in calls:
            with pytest.raises(InvalidQuery, match="limit"):
                call()
        assert kw.stats().as_dict()["documents"] == 1  # no agent document was written


def test_the_cli_meets_the_same_limits(kw: Knotwork, tmp_path: Path) -> None:
    kw.close()
    runner = CliRunner()
    db = ["--db", str(tmp_path / "s.db")]
    r = runner.invoke(app, [*db, "search", "x" * (limits.QUERY_CHARS + 1)])
    assert r.exit_code == 2 and "limit is 2,000" in r.output, r.output
    assert runner.invoke(app, [*db, "search", "x" * limits.QUERY_CHARS]).exit_code == 0


def test_json_depth_scan_skips_strings_and_escapes() -> None:
    assert too_deep(b"[" * 65) == 64
    assert too_deep(b"[" * 64 + b"]" * 64) is None
    assert too_deep(b'{"a": "[[[[[[[[\\"[[[["}', limit=2) is None
    assert too_deep(b'[[["\\\\"]]]', limit=2) == 2


def test_the_parser_keeps_the_facts_limit_the_table_states() -> None:
    from knotwork.ingest import markdown

    assert markdown.FACTS_PER_NOTE == limits.FACTS_PER_NOTE


def test_the_wiki_keeps_the_title_limit_the_table_states() -> None:
    from knotwork.wiki import names

    assert names.MAX_TITLE == limits.PAGE_TITLE_CHARS


def test_the_readme_states_every_limit() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| what | at most |"):]
    table = table[:table.index("\n\n")]
    for name, (value, _) in limits.ALL.items():
        assert f"{value:,}" in table, name


def test_a_name_holding_a_nul_is_the_same_entity_when_asserted_again(tmp_path: Path) -> None:
    """SQLite's json_each cut the key at the NUL, so the second assertion inserted the
    entity again and failed its UNIQUE key (a 500 at POST /facts)."""
    with Knotwork.open(None, db=str(tmp_path / "s.db")) as kw:
        first = kw.assert_fact("a\x00b", "p", "x\x00y", value_type="Entity")
        again = kw.assert_fact("a\x00b", "p", "x\x00y", value_type="Entity")
        assert (again.subject_id, again.object_id) == (first.subject_id, first.object_id)
        assert kw.facts("a\x00b")[0].value_label == "x\x00y"
