"""The store contract: what every storage backend must do, asked through the Protocols only.

The suite touches no connection, no SQL and no index syntax: a document goes in through
``StoreWriter`` as a hand-built ``ParsedDocument`` and comes back through ``StoreReader``
as records; text search is asked with ``TextQuery``. A backend joins by adding its name to
``conftest.BACKENDS`` and a way to make a fresh store's URL to ``conftest.URLS`` — the
tests themselves run unchanged. Tests of one backend's own rows, files or pragmas live
beside its code's tests (``tests/store/sqlite/``).
"""
