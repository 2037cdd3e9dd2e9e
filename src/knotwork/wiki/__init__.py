"""The wiki layer: pages agents write into the vault, its index and log, and lint.

``pages`` writes and reads the pages (through the ingest path, so a page is searchable
on return), ``files`` keeps ``index.md`` and ``log.md`` (locked, append-only), ``names``
makes titles into safe file names, and ``lint`` finds what is broken, orphaned,
contradictory or stale, each finding from indexed store queries. Nothing here calls a
model. Modules load when first used: a process that only queries imports none of them.
"""
