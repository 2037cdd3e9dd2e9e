"""The identifiers the store writes: stable spellings, since stored data depends on them."""

from __future__ import annotations

from knotwork.domain.ids import (
    DEFAULT_SCOPE,
    entity_key,
    fact_key,
    key_tail,
    literal_key,
    name_iri,
    note_iri,
    note_key,
    root_key,
)


def test_iris_quote_the_path_but_keep_its_slashes() -> None:
    assert note_iri(DEFAULT_SCOPE, "a b/Café.md") == "kw:note/a%20b/Caf%C3%A9"
    assert note_iri("work", "x.markdown") == "kw:work/note/x.markdown"
    assert name_iri("kestrel queue") == "kw:name/kestrel%20queue"
    assert name_iri("a/b?", "work") == "kw:work/name/a/b%3F"


def test_entity_keys() -> None:
    assert note_key(7) == "doc:7"
    assert entity_key(DEFAULT_SCOPE, "name:x") == "name:x"
    assert entity_key("work", "name:x") == "name@work\x1fx"
    assert entity_key("work", "doc:3") == "doc:3"
    assert literal_key("date", "2024-01-01") == "lit:date:2024-01-01"
    assert root_key("work") == "vault_root:work"


def test_fact_key_hashes_what_a_fact_says() -> None:
    tail = key_tail("2024", None, [("role", "lead")])
    assert tail == "2024\x1f\x1frole=lead"
    key = fact_key("doc:1", "uses", "name:x", tail)
    assert key == fact_key("doc:1", "uses", "name:x", "2024\x1f\x1frole=lead")
    assert len(key) == 32 and key != fact_key("doc:1", "uses", "name:y", tail)
    # pinned: a change here re-keys every stored fact, and needs a migration
    assert fact_key("doc:1", "uses", "name:x", "\x1f") == "a4cf5961e7af993526ee2bf5442b7de1"
