"""One fresh store per test and backend, opened by URL as an application opens it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knotwork.store import Store, open_store

from . import pg

# backend name -> the URL of a fresh, empty store of it in a test's tmp_path
URLS: dict[str, Callable[[Path], str]] = {
    "sqlite": lambda tmp: f"sqlite:///{tmp / 'store.db'}",
    # a schema of its own on the test server (``pg.py``: skipped without one, failed in CI)
    "postgresql": lambda tmp: pg.fresh_url(),
}
BACKENDS = list(URLS)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh store of the backend under test (open it again with it)."""
    url = URLS[request.param](tmp_path)
    yield url
    if url.startswith("postgresql://"):
        pg.drop(url)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()
