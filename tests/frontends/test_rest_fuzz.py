"""Schemathesis against the OpenAPI spec of a real ``knotwork serve`` (bounded examples per
operation): no 5xx, every response conforms to the schema the spec declares, and every
request the spec admits or refuses gets the status the spec lists.

The server runs over a small vault; write operations fuzz a throwaway store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
)

from .test_rest import Api, _serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield from _serve(tmp_path_factory.mktemp("rest-fuzz"))


@pytest.fixture(scope="module")
def api_schema(served: Api) -> Any:
    url = str(served.client.base_url)
    return schemathesis.openapi.from_url(f"{url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


# What a request the schema admits may still be refused for, with 400: rules across fields
# or against the store's state, which a JSON schema cannot say (each is documented).
ACROSS_FIELDS = ("cannot hold even an empty answer", "cannot hold even the heading",
                 "is after valid_to", "outside the years 1 to 9999")
# Routes that need a configured model: without one (as here) a request the schema admits
# is answered 503, which they declare.
NEEDS_MODEL = {"POST /ask", "POST /extract"}


def _whole_floats_for_integers(body: dict[str, Any], case: schemathesis.Case) -> bool:
    """A 422 only because an integer came as 1.0: JSON Schema calls 1.0 an integer, the
    routes take integers in their own JSON type (strict, as true is no integer). The
    error never echoes the value, so it is looked up in what was sent."""
    detail = body.get("detail") or []
    return bool(detail) and all(
        d.get("type") == "int_type" and isinstance(v := _sent(case, d["loc"]), float)
        and v.is_integer() for d in detail)


def _sent(case: schemathesis.Case, loc: list[Any]) -> Any:
    """The value ``case`` sent at a 422's ``loc`` (``["body", "tiers", "a", "top_k"]``)."""
    where, *path = loc
    value: Any = {"body": case.body, "query": case.query, "path": case.path_parameters}.get(
        where)
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


@schema.parametrize()
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
def test_no_5xx_and_responses_match_the_spec(case: schemathesis.Case, served: Api) -> None:
    excluded = [positive_data_acceptance, negative_data_rejection]
    if case.operation.label in NEEDS_MODEL:
        excluded.append(not_a_server_error)
    response = case.call_and_validate(base_url=str(served.client.base_url),
                                      excluded_checks=excluded)
    if case.operation.label in NEEDS_MODEL and response.status_code == 503:
        assert response.json()["error"] == "BackendUnavailable", response.text
        # only once the request is known good: a bad body is still refused as bad
        assert case.meta is None or not case.meta.is_negative_at(ParameterLocation.BODY), (
            case.body, response.text)
        return
    assert response.status_code < 500
    meta = case.meta
    if meta is None:
        return
    if meta.generation.mode.is_positive:
        # a request the schema admits is accepted, unless a rule across fields refuses it
        if response.status_code == 422:
            assert _whole_floats_for_integers(response.json(), case), response.text
        if response.status_code == 400:
            assert any(m in response.json()["message"] for m in ACROSS_FIELDS), response.text
    elif meta.is_negative_at(ParameterLocation.BODY):
        # a body the schema refuses is refused (a query string is text, whatever it spells,
        # so a "number" sent as a scope name is a name: not judged here)
        assert response.status_code >= 400, (case.body, response.text)
    Path(served.log).stat()  # the server is still there to log
