"""A PostgreSQL server for the tests: ``KNOTWORK_TEST_PG_URL`` (``.ci/postgres`` makes one).

Each store gets a schema of its own in that database (its URL sets ``search_path``), dropped
after the test. Without the variable the PostgreSQL tests are skipped, saying why; in CI
(``CI`` set) they fail instead: a missing server there is a broken CI, not a pass.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import quote

import pytest

ENV = "KNOTWORK_TEST_PG_URL"


def server_url() -> str:
    """The test server's URL, or a skip (a failure in CI) saying what is missing."""
    url = os.environ.get(ENV, "")
    if url:
        return url
    reason = f"{ENV} is not set: run `bash .ci/postgres` and export its output as {ENV}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def fresh_url() -> str:
    """The URL of a new, empty schema on the test server (``drop`` it after)."""
    import psycopg

    base = server_url()
    schema = "kwt_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")  # type: ignore[arg-type]
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-csearch_path={schema},public')}"


def drop(url: str) -> None:
    """Drop the schema of a URL made by ``fresh_url``."""
    import psycopg

    schema = url.rsplit("search_path%3D", 1)[1].split("%2C", 1)[0]
    with psycopg.connect(server_url(), autocommit=True) as con:
        con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]
