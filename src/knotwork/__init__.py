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
    IngestError,
    InvalidQuery,
    KnotworkError,
    NotFound,
    ParseError,
    QueryError,
    SchemaVersionError,
    StoreError,
)
from .types import (
    AmbiguousName,
    Compacted,
    ContextEntity,
    DocumentIngested,
    DocumentWarning,
    Embedded,
    EntityView,
    Evidence,
    FactRow,
    History,
    KnowledgeContext,
    SearchHit,
    Stats,
    SyncReport,
)

__version__ = "0.1.0"

__all__ = [
    "AmbiguousName",
    "BackendUnavailable",
    "Compacted",
    "ConfigError",
    "Conflict",
    "ContextEntity",
    "DocumentIngested",
    "DocumentWarning",
    "Embedded",
    "EntityView",
    "Evidence",
    "FactRow",
    "History",
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
    "Stats",
    "StoreError",
    "SyncReport",
    "__version__",
]
