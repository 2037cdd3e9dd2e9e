"""Trust you can inspect: the review queue, API tokens, the audit log, export/import.

Each module composes the store's Protocols (``knotwork.store``) and is called by the
facade (``core.Knotwork``); none holds SQL.
"""
