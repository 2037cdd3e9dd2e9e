"""A store URL on each backend, for the tests that run end to end on both; and a
PostgreSQL store of its own, for the tests of that backend alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knotwork.store import Store, open_store

from ..store_contract import pg


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store's URL: a file for SQLite, a schema of the test server for PostgreSQL."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
        return
    url = pg.fresh_url()
    yield url
    pg.drop(url)


@pytest.fixture
def url() -> Iterator[str]:
    """An empty PostgreSQL store's URL: a schema of the test server."""
    u = pg.fresh_url()
    yield u
    pg.drop(u)


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    """An open PostgreSQL store in an empty schema."""
    s = open_store(url)
    yield s
    s.close()
