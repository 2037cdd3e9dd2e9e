"""The knotwork error tree.

Every error knotwork raises is a ``KnotworkError`` carrying structured fields, so a
front end can map it to an exit code, an HTTP status or an MCP tool error in one table::

    KnotworkError
    ├── ConfigError(key, hint)              unknown or mistyped setting
    ├── IngestError(path, line)             a file or document that cannot be ingested
    │   └── ParseError(path, line)          malformed input inside it
    ├── StoreError
    │   ├── NotFound(kind, key)
    │   ├── Conflict(key)
    │   ├── SchemaVersionError(found, expected)
    │   └── BackendUnavailable(backend, hint)
    ├── QueryError
    │   └── InvalidQuery(reason)
    │       └── UnsafePath(path)            a wiki path or title that would leave its folder
    └── Forbidden(scope)                    outside what the caller's token may do

Expected outcomes (an unchanged file, a dropped relation) are values, never errors.
"""

from __future__ import annotations


class KnotworkError(Exception):
    """Base of every error knotwork raises on purpose."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class ConfigError(KnotworkError):
    """A setting is unknown, mistyped or contradicts another."""

    def __init__(self, message: str, *, key: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.key = key


class IngestError(KnotworkError):
    """A source cannot be ingested; carries the file and, where known, the line."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class ParseError(IngestError):
    """Malformed content (YAML, encoding) inside a source."""


class StoreError(KnotworkError):
    """The store refused or failed an operation."""


class NotFound(StoreError):
    """No row of ``kind`` answers to ``key``; ``message`` says more when there is more."""

    def __init__(self, kind: str, key: str, *, message: str | None = None) -> None:
        super().__init__(message or f"no {kind} named {key!r}")
        self.kind = kind
        self.key = key


class Conflict(StoreError):
    """The operation contradicts the current state (e.g. retracting a retracted fact)."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class SchemaVersionError(StoreError):
    """The store file was written by a newer knotwork."""

    def __init__(self, found: int, expected: int) -> None:
        super().__init__(
            f"store schema version {found} is newer than this knotwork supports ({expected})",
            hint="upgrade knotwork",
        )
        self.found = found
        self.expected = expected


class BackendUnavailable(StoreError):
    """A storage backend or its driver cannot be used here."""

    def __init__(self, backend: str, hint: str) -> None:
        super().__init__(f"backend {backend!r} is unavailable", hint=hint)
        self.backend = backend


class QueryError(KnotworkError):
    """A query cannot be answered as asked."""


class InvalidQuery(QueryError):
    """The query's arguments are malformed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnsafePath(InvalidQuery):
    """A page path or title that would escape the wiki folder (``../``, absolute, NUL)."""

    def __init__(self, reason: str, *, path: str) -> None:
        super().__init__(reason)
        self.path = path


class Forbidden(KnotworkError):
    """The caller's token may not do this: a scope it was not given, or a write with a
    read-only token."""

    def __init__(self, message: str, *, scope: str | None = None) -> None:
        super().__init__(message)
        self.scope = scope
