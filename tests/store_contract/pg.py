"""A PostgreSQL server for the tests: ``KNOTWORK_TEST_PG_URL`` (``.ci/postgres`` makes one).

Each store gets a schema of its own in that database (its URL sets ``search_path``). A test's
schema is emptied after it (``schema.emptying``) and handed to the next test, so the schema
is migrated once per worker, not once per test; all are dropped when the tests end. Without
the variable the PostgreSQL tests are skipped, saying why; in CI (``CI`` set) they fail
instead: a missing server there is a broken CI, not a pass.
"""

from __future__ import annotations

import atexit
import os
import uuid
from urllib.parse import quote

import pytest

ENV = "KNOTWORK_TEST_PG_URL"
_free: list[str] = []  # URLs of emptied schemas, ready for the next test
_made: list[str] = []  # every schema made, dropped at exit


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
    """The URL of an empty store's schema on the test server (give it back with ``drop``)."""
    import psycopg

    base = server_url()
    if _free:
        return _free.pop()
    schema = "kwt_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}".encode())
    if not _made:
        atexit.register(_drop_all, base)
    _made.append(schema)
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-csearch_path={schema},public')}"


def drop(url: str) -> None:
    """Empty the store at ``url`` (made by ``fresh_url``) for the next test."""
    import psycopg

    from knotwork.store.postgres.schema import emptying

    try:
        with psycopg.connect(url, autocommit=True) as con:
            if con.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone() == (True,):
                for sql in emptying():
                    con.execute(sql.encode())
    except psycopg.Error:
        return  # left as it is (dropped at exit); the next test gets a new one
    _free.append(url)


def _drop_all(base: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as con:
        for schema in _made:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
