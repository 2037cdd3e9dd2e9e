"""The multilingual tables: keys, list relation phrases, sentence phrases."""

from __future__ import annotations

import pytest

from knotwork.ingest import lexicon
from knotwork.ingest.lexicon import (
    expand,
    infer_relation,
    normalize_key,
    normalize_relation,
    register_relation,
    snake_case,
)


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        ("role", "role"), ("Ruolo", "role"), ("ROLLE", "role"), ("rôle", "role"), ("rol", "role"),
        ("squadra", "team"), ("équipe", "team"), ("equipo", "team"),
        ("proprietario", "owner"), ("Eigentümer", "owner"), ("besitzer", "owner"),
        ("propriétaire", "owner"), ("propietario", "owner"), ("responsabile", "owner"),
        ("verantwortlich", "owner"), ("responsable", "owner"),
        ("stato", "status"), ("Zustand", "status"), ("statut", "status"), ("estado", "status"),
        ("datum", "date"), ("data", "date"), ("fecha", "date"),
        ("dipende_da", "depends_on"), ("abhängig von", "depends_on"), ("dépend-de", "depends_on"),
        ("depende_de", "depends_on"), ("parte_di", "part_of"), ("Teil von", "part_of"),
        ("fait_partie_de", "part_of"), ("parte_de", "part_of"), ("gira_su", "runs_on"),
        ("läuft_auf", "runs_on"), ("tourne_sur", "runs_on"), ("se_ejecuta_en", "runs_on"),
        ("location", "located_at"), ("Ort", "located_at"), ("standort", "located_at"),
        ("luogo", "located_at"), ("sede", "located_at"), ("lieu", "located_at"),
        ("ubicación", "located_at"), ("ubicacion", "located_at"),
        ("tag", "tags"), ("Schlagworte", "tags"), ("etichette", "tags"),
        ("étiquettes", "tags"), ("etiquetas", "tags"), ("alias", "aliases"),
        ("titel", "title"), ("titolo", "title"), ("titre", "title"), ("título", "title"),
        ("typ", "type"), ("tipo", "type"),
        ("Runs On", "runs_on"), ("kep-number", "kep_number"), ("dueDate", "due_date"),
        ("Größe", "größe"), ("  spaced  out ", "spaced_out"),
    ],
)
def test_normalize_key(key: str, canonical: str) -> None:
    assert normalize_key(key) == canonical


def test_snake_case_keeps_unicode_letters() -> None:
    assert snake_case("Città natale") == "città_natale"
    assert snake_case("a--b__c") == "a_b_c"


@pytest.mark.parametrize(
    ("phrase", "predicate"),
    [
        ("depends on", "depends_on"), ("depends_on", "depends_on"), ("Depends On", "depends_on"),
        ("hängt ab von", "depends_on"), ("dipende da", "depends_on"),
        ("dépend de", "depends_on"), ("depende de", "depends_on"),
        ("part of", "part_of"), ("fa parte di", "part_of"), ("runs-on", "runs_on"),
        ("implements", "implements"), ("inspired by", "inspired_by"),
    ],
)
def test_normalize_relation(phrase: str, predicate: str) -> None:
    assert normalize_relation(phrase) == predicate


@pytest.mark.parametrize(
    ("text", "predicate"),
    [
        ("It runs on ", "runs_on"),
        ("It RUNS   ON the ", "runs_on"),
        ("it runs on **", "runs_on"),
        ("(runs on ", "runs_on"),
        ("uses '", "uses"),
        ("dipende dall'", "depends_on"),
        ("dipende dall’", "depends_on"),
        ("gira su l'", "runs_on"),
        ("läuft auf dem „", "runs_on"),
        ("reruns on ", None),
        ("runs on: ", None),
        ("nothing here ", None),
        ("", None),
        ("x" * 200 + " depends on ", "depends_on"),
    ],
)
def test_infer_relation(text: str, predicate: str | None) -> None:
    assert infer_relation(text) == predicate


def test_expand() -> None:
    assert expand("a {b,c} d {e,f}") == ["a b d e", "a b d f", "a c d e", "a c d f"]


def test_register_relation(taught_relation: None) -> None:
    assert infer_relation("it is mentored by ") is None
    register_relation("en", "is {mentored,coached} by", "mentored_by")
    assert infer_relation("it is coached by ") == "mentored_by"
    assert normalize_relation("is mentored by") == "mentored_by"
    with pytest.raises(ValueError):
        register_relation("en", "x", "Not Snake")


def test_what_a_test_teaches_is_forgotten_after_it() -> None:
    # the fixture above restored the lexicon: nothing taught stays for other tests
    assert infer_relation("it is mentored by ") is None
    assert not lexicon.registered()


def test_the_lexicon_is_one_object_the_module_functions_are_its(taught_relation: None) -> None:
    from knotwork.ingest.lexicon import LEXICON, known_key, may_be_key

    before = LEXICON.snapshot()
    assert lexicon.register_key.__self__ is LEXICON  # type: ignore[attr-defined]
    LEXICON.register_key("reviewer", "Gutachter")
    LEXICON.register_relation("en", "is audited by", "audited_by")
    assert known_key("Gutachter") == "reviewer" and may_be_key("Gutachter")
    assert infer_relation("it is audited by ") == "audited_by"
    assert lexicon.registered() == (("key", "reviewer", "Gutachter"),
                                    ("relation", "en", "is audited by", "audited_by"))
    LEXICON.restore(before)  # every cache forgets what was taught
    assert known_key("Gutachter") is None and not may_be_key("Gutachter")
    assert infer_relation("it is audited by ") is None
    assert lexicon.registered() == ()
