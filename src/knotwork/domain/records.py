"""What a typed record states about itself rather than about the world.

Every record a typed parser reads (an ADR, a KEP, a feature and its tasks) carries the
standard metadata ``ingest.parsers.typed.metadata`` writes: which kind of record it is,
the file, the parser and its version. Those facts hold whenever the record exists (no
valid time), stay when a record is superseded, and are what an answer can spare first:
its citation and types already say them.
"""

from __future__ import annotations

__all__ = ["RECORD_METADATA"]

RECORD_METADATA = frozenset({"entity_type", "source_file", "parser_type", "parser_version"})
