"""What a PostgreSQL ``context`` read sends: a note's ``updated`` date goes with its facts."""

from __future__ import annotations

from typing import Any

import pytest

from knotwork.store import Store
from knotwork.store.postgres import connection
from knotwork.types import name_key

from ..store_contract.drafts import doc, fact, lit


def test_an_updated_date_read_with_the_notes_facts_sends_no_statement_of_its_own(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("updated", lit("2024-05-01"), 2),
                                        fact("status", lit("open"), 3)]))
    note = store.reader.find_entity("a", name_key("a"))
    rec = store.reader.document("default", "a.md")
    assert note is not None and rec is not None
    sent: list[str] = []
    run = connection._run

    def counted(con: Any, sql: str, args: Any) -> connection.Result:
        sent.append(sql)
        return run(con, sql, args)

    monkeypatch.setattr(connection, "_run", counted)
    with store.snapshot():
        row = store.reader.entities([note])[note]
        store.reader.entity_facts(note, out_limit=10, in_limit=5,
                                  own_document=row.document_id)
        before = len(sent)
        assert store.reader.updated_dates([(rec.id, "default", "a.md")]) == {
            rec.id: "2024-05-01"}
        assert len(sent) == before  # read in the facts' round trip
        # another document's path: read by a statement of its own, as before
        assert store.reader.updated_dates([(rec.id, "default", "b.md")]) == {}
        assert len(sent) == before + 1
