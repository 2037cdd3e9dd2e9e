"""Bring the store in step with its sources: folders of notes, agent-written documents, watching.

``knotwork.ingest`` turns bytes into records and never touches a store; this package is
where those records meet the store:

- ``files``: sync a folder (add, edit, rename, delete per document; batches; workers).
- ``agent``: documents written through the API (``ingest_document``) and the ontology.
- ``watch``: a watcher that runs ``files.sync`` on the paths that changed.
- ``vault``: what ingesting one note file means, and building a vault's watcher.
"""
