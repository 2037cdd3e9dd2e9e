"""knotwork: a local-first context graph for AI agents.

Point it at a folder of Markdown; every fact it extracts knows the text it came from,
edits and deletes apply incrementally, and ``context(query)`` returns ranked, cited
context cut to a token budget.
"""

from .config import SETTINGS, Settings
from .core import Knotwork
from .errors import (
    BackendUnavailable,
    ConfigError,
    Conflict,
    Forbidden,
    IngestError,
    InvalidQuery,
    KnotworkError,
    NotFound,
    ParseError,
    QueryError,
    SchemaVersionError,
    StoreError,
    UnsafePath,
)
from .types import (
    ContextEntity,
    EntityView,
    Evidence,
    FactRow,
    KnowledgeContext,
    SearchHit,
    SyncReport,
)

__version__ = "0.1.0"

__all__ = [
    "BackendUnavailable",
    "ConfigError",
    "Conflict",
    "ContextEntity",
    "EntityView",
    "Evidence",
    "FactRow",
    "Forbidden",
    "IngestError",
    "InvalidQuery",
    "Knotwork",
    "KnotworkError",
    "KnowledgeContext",
    "NotFound",
    "ParseError",
    "QueryError",
    "SETTINGS",
    "SchemaVersionError",
    "SearchHit",
    "Settings",
    "StoreError",
    "SyncReport",
    "UnsafePath",
    "__version__",
]
