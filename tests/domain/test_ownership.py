"""The ownership diff: the pure rule, its invariants, and the SQLite writer applying it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork.domain.ownership import FactDiff, diff_facts
from knotwork.store import open_store
from knotwork.types import (
    SELF,
    Applied,
    ChunkDraft,
    FactDraft,
    LiteralValue,
    NameDecl,
    ParsedDocument,
    Span,
)


def test_a_statement_is_kept_added_or_retracted_by_what_it_says() -> None:
    assert diff_facts(["a", "b"], ["b", "c"]) == FactDiff(retract=("a",), add=("c",),
                                                          keep=("b",))
    assert diff_facts([], ["x", "x"]) == FactDiff(retract=(), add=("x",), keep=())
    assert diff_facts(["x"], []) == FactDiff(retract=("x",), add=(), keep=())


def test_order_follows_the_new_text_and_the_old_rows() -> None:
    got = diff_facts(["o3", "k2", "o1", "k1"], ["n2", "k1", "n1", "k2", "n2"])
    assert got == FactDiff(retract=("o3", "o1"), add=("n2", "n1"), keep=("k1", "k2"))


keys = st.text(alphabet="abcdef", min_size=1, max_size=2)


@given(st.lists(keys, unique=True), st.lists(keys))
def test_applying_the_diff_to_old_yields_new(old: list[str], new: list[str]) -> None:
    d = diff_facts(old, new)
    assert (set(old) - set(d.retract)) | set(d.add) == set(new)  # nothing in new is lost
    assert not set(d.keep) & set(d.retract) and not set(d.add) & set(d.keep)
    assert set(d.retract) <= set(old) and not set(d.add) & set(old)
    assert len(d.add) == len(set(d.add)) and len(d.keep) == len(set(d.keep))
    assert [k for k in dict.fromkeys(new)] == [k for k in dict.fromkeys(new)
                                               if k in d.add or k in d.keep]


# ---------------------------------------------------------------- through the store

def _doc(values: list[str]) -> ParsedDocument:
    """A note stating ``role: v`` for each value, one line each (repeats included)."""
    lines = ["# n", *(f"role: {v}" for v in values)]
    facts = tuple(FactDraft(subject=SELF, predicate="role", object=LiteralValue(v),
                            span=Span(i + 2, i + 2), supporting_text=f"role: {v}",
                            extractor="test") for i, v in enumerate(values))
    text = "\n".join(lines)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return ParsedDocument(path="n.md", text=text, content_hash=digest,
                          title="n", doc_type="note", names=(NameDecl("n", "n", "path"),),
                          chunks=(ChunkDraft(0, ("n",), text, Span(1, len(lines))),),
                          facts=facts)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from("abcde")), st.lists(st.sampled_from("abcde")))
def test_the_sqlite_writer_applies_the_pure_diff(tmp_path: Path, old: list[str],
                                                 new: list[str]) -> None:
    """Write a note, edit it: the counts the writer reports, and the facts left live,
    are those of ``diff_facts`` over the statements (here: the values)."""
    db = tmp_path / f"s{abs(hash((tuple(old), tuple(new))))}.db"
    store = open_store(str(db))
    try:
        with store.write(actor="test") as w:
            w.apply("default", _doc(old))
        with store.write(actor="test") as w:
            out = w.apply("default", _doc(new), force=True)
        assert isinstance(out, Applied)
        want = diff_facts(list(dict.fromkeys(old)), new)
        assert (out.added, out.retracted, out.kept) == (len(want.add), len(want.retract),
                                                        len(want.keep))
        eid = store.reader.find_entity("n", "n")
        assert eid is not None
        live = sorted(f.value for f in store.reader.facts([eid]) if f.predicate == "role")
        assert live == sorted(set(new))
    finally:
        store.close()
    db.unlink()
