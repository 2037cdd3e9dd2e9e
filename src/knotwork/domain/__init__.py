"""The domain rules, as pure functions over plain values: no SQL, no files, no store.

- ``words``: every rule that turns text into words (search, names, labels, acronyms).
- ``ids``: every identifier and key the store writes (IRIs, entity keys, fact keys).
- ``ownership``: which facts an edit retracts, adds and keeps (``diff_facts``).
- ``names``: which note wins a name (``name_winner``).
- ``records``: what a typed record states of itself (``RECORD_METADATA``).

The bottom layer: it imports nothing of knotwork (``types`` re-exports the few of its
names that records need), so every other layer, and each store backend, may call it.
"""
