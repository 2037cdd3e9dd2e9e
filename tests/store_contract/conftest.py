"""One fresh store per test and backend, opened by URL as an application opens it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knotwork.store import Store, open_store

# backend name -> the URL of a fresh, empty store of it in a test's tmp_path
URLS: dict[str, Callable[[Path], str]] = {
    "sqlite": lambda tmp: f"sqlite:///{tmp / 'store.db'}",
}
BACKENDS = list(URLS)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh store of the backend under test (open it again with it)."""
    return URLS[request.param](tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()
