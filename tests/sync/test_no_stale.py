"""The invariant that defines knotwork: after any sequence of creates, edits, renames,
moves with an edit, deletes and atomic saves, the live facts equal those of a fresh ingest
of the files, and every fact ever recorded still finds the chunk it cites (the store drops
the chunks of past versions that no fact cites, here as often as it can)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork import Knotwork
from knotwork.store.sqlite import writer
from knotwork.types import FactRow

# "Kestrel" lies inside "Kestrel Queue": a mention must move between them as notes come
# and go (the longest known name wins)
# and "kestrel-queue" is a file name of the same words: a note linking one of the two
# means it by those words, and the words' mentions move between them
# and "ops/README", "ops/index", "ops" (beside the folder) and "ops/deep/deep" (a folder
# note) compete to be a folder's page: its notes' ``part_of`` must follow the winner as
# pages come and go, without the notes being read again
NAMES = ["Alpha", "Beta", "ops/Gamma", "ops/deep/Delta", "Kestrel Queue", "kota", "Kestrel",
         "x/kestrel-queue", "ops/README", "ops/index", "ops", "ops/deep/deep"]
TARGETS = ["Alpha", "Beta", "Gamma", "Delta", "Kestrel Queue", "kota", "KQ", "Missing Note",
           "ops/Gamma", "kestrel-queue"]

line = st.one_of(
    # "# Kota Host" as a first line titles the note: "kota", its file name, is then no
    # name prose mentions it by (``mention_labels``), and is again when the title goes
    st.sampled_from(["", "Plain prose without links.", "## Section", "### Deeper", "#infra note",
                     "# Kota Host", "# Horizontal Pod Autoscaler",
                     "- [decision] Pin the version #ops (after review)", "status:: active",
                     "```", "port:: 443",
                     # fields on lines of their own: at the head, and in a one-line section
                     "Date: 2020-01-02", "## Status", "Accepted",
                     # a record: the fields under it are its own
                     "### TASK-A-1: Do it",
                     # a heading naming a relation for the list items under it; comments,
                     # which make no chunk and come before a title; a Setext underline
                     "## Dependencies", "<!--", "-->", "%% hidden %%", "==="]),
    st.builds(lambda t: f"- [[{t}]]", st.sampled_from(TARGETS)),
    st.builds(lambda a, b: f"- [[{a}]] and [[{b}]] here", st.sampled_from(TARGETS),
              st.sampled_from(TARGETS)),
    st.builds(lambda t: f"Owner: [[{t}]]", st.sampled_from(TARGETS)),
    st.builds(lambda t: f"Superseded by [[{t}]]", st.sampled_from(TARGETS)),
    st.builds(lambda t: f"See [[{t}]] for details.", st.sampled_from(TARGETS)),
    st.builds(lambda a, b: f"[[{a}]] runs on [[{b}]].", st.sampled_from(TARGETS),
              st.sampled_from(TARGETS)),
    st.builds(lambda t: f"- depends_on [[{t}]] (for storage)", st.sampled_from(TARGETS)),
    st.builds(lambda t: f"It works with [[{t}|the team]] daily.", st.sampled_from(TARGETS)),
    st.builds(lambda t: f"owner:: [[{t}]]", st.sampled_from(TARGETS)),
    # the note's own runs_on in prose (a guess, confidence < 1) beside the frontmatter's
    st.builds(lambda t: f"Maybe it runs on [[{t}]] now.", st.sampled_from(TARGETS)),
    # plain-text mentions: they must follow the named note as it comes, goes or is renamed
    # ("Kota Host" titles kota.md: a note linking [[kota]] does not mention it so, until
    # the note is renamed away from the name linked)
    st.builds(lambda t: f"We talked about {t} today.",
              st.sampled_from(TARGETS + ["Gamma", "Kota Host"])),
    st.builds(lambda t: f"Read [the note](../{t}.md).", st.sampled_from(["Alpha", "ops/Gamma"])),
)


@st.composite
def note(draw: st.DrawFn) -> str:
    head: list[str] = []
    if draw(st.booleans()):
        head = ["---"]
        if draw(st.booleans()):
            head.append(f"aliases: [{draw(st.sampled_from(['KQ', 'Q', 'ops']))}]")
        if draw(st.booleans()):
            head.append(f'runs_on: "[[{draw(st.sampled_from(TARGETS))}]]"')
        if draw(st.booleans()):
            head.append("role: ruolo")
        if draw(st.booleans()):
            head.append("tags: [x, y")  # malformed YAML: an error, the body still counts
        head.append("---")
    body = draw(st.lists(line, max_size=8))
    if draw(st.booleans()):  # a title: a label of three words spells "hpa"
        body.insert(0, draw(st.sampled_from(["# Horizontal Pod Autoscaler", "# Kota Host"])))
    return "\n".join(head + body) + ("\n" if draw(st.booleans()) else "")


op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), note()),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("atomic"), st.sampled_from(NAMES), note()),
    st.tuples(st.just("prepend"), st.sampled_from(NAMES), st.just("")),
    # to another folder, keeping the file name, with a line added: a rename and an edit
    st.tuples(st.just("move"), st.sampled_from(NAMES), st.sampled_from(["", "ops", "x/y"])),
)


def canon(f: FactRow) -> tuple[object, ...]:
    src = f.source
    return (f.subject_iri, f.predicate, f.value, f.value_type, f.datatype, f.confidence,
            f.trust, f.extractor, f.qualifiers, src and (src.path, src.line_start, src.line_end,
                                                         src.supporting_text))


def live(kw: Knotwork) -> list[tuple[object, ...]]:
    return sorted((canon(f) for f in kw.store.reader.live_facts()), key=repr)


def spelled(kw: Knotwork) -> list[tuple[str, str]]:
    """What the notes' labels spell by their initials, as the store indexes it.

    Read from SQLite's index table itself, not through ``StoreReader.spelled_by``: that
    answers only for initials one asks about, and a stale row left by a label that no
    longer exists would spell initials nobody knows to ask for."""
    return sorted(kw.store.reader.con.execute(
        "SELECT e.label, i.initials FROM entity_initials i JOIN entities e"
        " ON e.id = i.entity_id").fetchall())


def uncited(kw: Knotwork) -> list[int]:
    """The facts, live or retracted, whose cited chunk the store no longer has."""
    stats = kw.stats()
    reader = kw.store.reader
    rows = reader.facts_by_id(list(range(1, stats["facts"] + stats["retracted_facts"] + 1)))
    cites = {f.id: f.source.chunk_id for f in rows if f.source and f.source.chunk_id}
    found = reader.chunks(sorted(set(cites.values())))
    return [fid for fid, cid in cites.items() if cid not in found]


def apply_op(vault: Path, kind: str, name: str, arg: str) -> None:
    path = vault / f"{name}.md"
    if kind == "write" or kind == "atomic":
        if kind == "atomic" and path.exists():
            path.unlink()  # an editor's atomic save: delete, then create the same path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arg, encoding="utf-8")
    elif kind == "delete" and path.exists():
        path.unlink()
    elif kind == "rename" and path.exists():
        dest = vault / f"{arg}.md"
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            path.rename(dest)
    elif kind == "move" and path.exists():
        dest = vault / arg / path.name
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            path.unlink()
            dest.write_text(text + "\nSee [[Alpha]] after the move.\n", encoding="utf-8")
    elif kind == "prepend" and path.exists():
        path.write_text("Inserted first line.\n" + path.read_text(encoding="utf-8"),
                        encoding="utf-8")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=10))
def test_live_facts_equal_a_fresh_ingest_after_every_step(ops: list[tuple[str, str, str]]
                                                          ) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        kw = Knotwork.open(vault, db=str(Path(tmp) / "inc.db"), synchronous="OFF")
        pace, writer.COMPACT_MIN = writer.COMPACT_MIN, 0  # drop uncited chunks often
        try:
            for i, (kind, name, arg) in enumerate(ops):
                apply_op(vault, kind, name, arg)
                kw.ingest()
                fresh = Knotwork.open(vault, db=str(Path(tmp) / f"fresh{i}.db"),
                                      synchronous="OFF")
                try:
                    fresh.ingest()
                    assert live(kw) == live(fresh), f"step {i}: {kind} {name}"
                    assert kw.stats()["documents"] == fresh.stats()["documents"]
                    assert spelled(kw) == spelled(fresh), f"step {i}: {kind} {name}"
                    assert not uncited(kw), f"step {i}: {kind} {name}"
                finally:
                    fresh.close()
        finally:
            writer.COMPACT_MIN = pace
            kw.close()


def live_in(kw: Knotwork, scope: str) -> list[tuple[object, ...]]:
    return sorted((canon(f) for f in kw.store.reader.live_facts(scopes=[scope])), key=repr)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["alpha", "beta"]), op), min_size=1, max_size=8))
def test_each_scopes_live_facts_equal_a_fresh_ingest_of_that_scope_alone(
        ops: list[tuple[str, tuple[str, str, str]]]) -> None:
    """Two scopes of the same note names in one store, each synced after its own edits:
    each scope's live facts are those of a store of its notes alone (its mentions read
    against its own names only, and retracted when its own note of a name goes though the
    other scope's stays)."""
    with tempfile.TemporaryDirectory() as tmp:
        vaults = {s: Path(tmp) / s for s in ("alpha", "beta")}
        for v in vaults.values():
            v.mkdir()
        db = str(Path(tmp) / "inc.db")
        kws = {s: Knotwork.open(v, db=db, synchronous="OFF", embedder="none", scope=s)
               for s, v in vaults.items()}
        try:
            for i, (scope, (kind, name, arg)) in enumerate(ops):
                apply_op(vaults[scope], kind, name, arg)
                kws[scope].ingest()
                fresh = Knotwork.open(vaults[scope], db=str(Path(tmp) / f"fresh{i}.db"),
                                      synchronous="OFF", embedder="none", scope=scope)
                try:
                    fresh.ingest()
                    assert live_in(kws[scope], scope) == live_in(fresh, scope), f"step {i}"
                finally:
                    fresh.close()
            for s, v in vaults.items():  # and the scope not synced last, at the end
                with Knotwork.open(v, db=str(Path(tmp) / f"end-{s}.db"), synchronous="OFF",
                                   embedder="none", scope=s) as fresh:
                    fresh.ingest()
                    assert live_in(kws[s], s) == live_in(fresh, s), f"end: {s}"
        finally:
            for k in kws.values():
                k.close()
