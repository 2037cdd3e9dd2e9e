"""A store URL on each backend, for the tests that run end to end on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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
