"""Which note wins a name: the pure rule, and the SQLite store's SQL form agreeing with it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork.domain.names import NameClaim, name_winner, ranked_paths
from knotwork.store import open_store
from knotwork.store.sqlite.schema import NAME_WINNER
from tests.store_contract.drafts import doc


def test_a_path_beats_a_stem_or_title_which_beat_an_alias() -> None:
    claims = [NameClaim(1, "alias", "x.md"), NameClaim(2, "title", "long/er/y.md"),
              NameClaim(3, "path", "deep/nested/q.md")]
    assert name_winner(claims) == 3
    assert name_winner(claims[:2]) == 2
    assert ranked_paths(claims) == ("deep/nested/q.md", "long/er/y.md", "x.md")


def test_then_the_shortest_path_then_the_path_in_code_point_order() -> None:
    assert name_winner([NameClaim(1, "stem", "aa/x.md"), NameClaim(2, "stem", "x.md")]) == 2
    # a stem and a title rank alike
    assert name_winner([NameClaim(1, "title", "b.md"), NameClaim(2, "stem", "a.md")]) == 2
    assert name_winner([NameClaim(1, "stem", "é.md"), NameClaim(2, "stem", "z.md")]) == 2
    assert name_winner([NameClaim(2, "stem", "z.md"), NameClaim(1, "stem", "B.md")]) == 1


def test_no_claim_no_winner_and_one_path_is_no_ambiguity() -> None:
    assert name_winner([]) is None and ranked_paths([]) == ()
    one = [NameClaim(4, "stem", "x.md"), NameClaim(4, "title", "x.md")]
    assert name_winner(one) == 4 and ranked_paths(one) == ("x.md",)


# ---------------------------------------------------------------- the SQL form

FOLDERS = ["", "a/", "a/b/", "Zé/"]
STEMS = ["x", "X", "y", "é", "x y"]
notes = st.lists(
    st.tuples(st.sampled_from(FOLDERS), st.sampled_from(STEMS),
              st.sampled_from([None, "x", "Y", "a/x"]),  # title
              st.lists(st.sampled_from(["x", "y", "a/x", "é"]), unique=True, max_size=2),
              st.sampled_from(["default", "default", "work"]),  # scope
              st.booleans()),  # deleted afterwards
    max_size=8, unique_by=lambda n: (n[0] + n[1], n[4]))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes)
def test_the_sqlite_name_winner_is_the_pure_rule(tmp_path: Path, spec: list[tuple[
        str, str, str | None, list[str], str, bool]]) -> None:
    """Notes declaring overlapping names in two scopes, some deleted again: for every
    name, ``schema.NAME_WINNER`` run on the store's tables picks the note ``name_winner``
    picks, and ``ambiguous_names`` lists the paths ``ranked_paths`` ranks."""
    db = tmp_path / f"n{abs(hash(repr(spec)))}.db"
    store = open_store(str(db))
    try:
        docs = [(scope, doc(folder + stem + ".md", [], title=title, aliases=tuple(aliases)),
                 gone) for folder, stem, title, aliases, scope, gone in spec]
        with store.write(actor="test") as w:
            for scope, d, _ in docs:
                w.apply(scope, d)
        with store.write(actor="test") as w:
            for scope, d, gone in docs:
                if gone:
                    w.delete(scope, d.path)
        con = store._con()  # type: ignore[attr-defined]
        claims: dict[tuple[str, str], list[NameClaim]] = defaultdict(list)
        for scope, d, gone in docs:
            if gone:
                continue
            (eid,) = con.execute("SELECT e.id FROM entities e JOIN documents d"
                                 " ON e.key = 'doc:' || d.id WHERE d.path = ? AND d.scope = ?",
                                 (d.path, scope)).fetchone()
            for n in d.names:
                claims[scope, n.key].append(NameClaim(eid, n.kind, d.path))
        every_key = {n.key for _, d, _ in docs for n in d.names}
        for scope in ("default", "work"):
            for key in every_key:
                (sql,) = con.execute(f"SELECT {NAME_WINNER} FROM (SELECT ? AS name_key,"
                                     " ? AS scope) AS entities", (key, scope)).fetchone()
                assert sql == name_winner(claims.get((scope, key), [])), (scope, key)
        by_key: dict[str, list[NameClaim]] = defaultdict(list)
        for (_, key), found in claims.items():
            by_key[key] += found
        want = {k: list(ranked_paths(c)) for k, c in by_key.items() if len(ranked_paths(c)) > 1}
        assert dict(store.reader.ambiguous_names(limit=1000)) == want
    finally:
        store.close()
    db.unlink()
