"""The as-of property: after any sequence of edits, ``context(as_of=t)`` answers what the
store answered when it stood at ``t``.

The edits: notes rewritten (their fields and links), facts asserted and retracted. Deleted
notes, past prose and names that another note takes over later are the edits of
``test_as_of_history.py``. Not covered by either: a kept fact's citation (it follows the
note's lines: an as-of answer shows the citation of the latest version that kept it)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork import Knotwork
from knotwork.store import record_time

NAMES = ("Traefik", "Grafana", "kota")
# what changes between versions is what the notes state (fields and links) in as many
# lines: a kept fact's citation follows the note, and past chunks are not searched (the
# module docstring)
BODIES = tuple("---\n" + front + "---\n# {n}\n\nThe edge proxy; it routes to [[Grafana]].\n"
               for front in (
    "type: service\nruns_on: \"[[kota]]\"\nport: 443\n",
    "type: service\nport: 8443\nteam: edge\n",
    "status: up\nowner: \"[[Dana]]\"\nruns_on: \"[[Grafana]]\"\n",
    "a: 1\nb: 2\nc: 3\n",
))
QUERIES = ("traefik", "kota", "grafana dashboards")

edit = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.integers(0, len(BODIES) - 1)),
    st.tuples(st.just("assert"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("retract"), st.sampled_from(NAMES), st.just(0)),
)


def replay(writes: Sequence[Callable[[], None]],
           answers: Callable[[str | None], object]) -> None:
    """Run each write, noting the time after it and what ``answers`` (live) gave then;
    then ask again as of each noted time: the same answers, or the time that differs."""
    seen: list[tuple[str, object]] = []
    for write in writes:
        write()
        time.sleep(0.002)  # a checkpoint strictly between two writes
        seen.append((record_time(datetime.now(UTC)), answers(None)))
    for t, then in seen:
        assert answers(t) == then, t


def _apply(kw: Knotwork, vault: Path, op: tuple[str, str, int]) -> None:
    kind, name, n = op
    path = vault / f"{name}.md"
    if kind == "write":
        path.write_text(BODIES[n].format(n=name), encoding="utf-8")
        kw.ingest(only=[f"{name}.md"])
    elif kind == "delete" and path.exists():
        path.unlink()
        kw.ingest(only=[f"{name}.md"])
    elif kind == "assert":
        kw.assert_fact(name, "tier", f"t{n}")
    elif kind == "retract":
        live = [f for f in kw.store.reader.live_facts() if f.trust == "asserted"]
        if live:
            kw.retract_fact(live[0].id, reason="wrong")


def _answers(kw: Knotwork, as_of: str | None) -> list[dict[str, object]]:
    return [kw.context(q, max_tokens=0, as_of=as_of).as_dict() for q in QUERIES]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=7))
def test_context_as_of_equals_the_store_stopped_then(ops: list[tuple[str, str, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "v"
        vault.mkdir()
        for name in NAMES:
            (vault / f"{name}.md").write_text(BODIES[0].format(n=name), encoding="utf-8")
        with Knotwork.open(vault, db=str(Path(tmp) / "s.db"), embedder="none") as kw:
            kw.ingest()
            replay([lambda op=op: _apply(kw, vault, op) for op in ops],
                   lambda t: _answers(kw, t))
