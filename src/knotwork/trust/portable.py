"""Export a store as JSON lines, and import such a file into an empty store.

The file: a header line, one line per row (``{"table": …, "row": {…}}``: documents,
versions with their whole text, chunks, entities, names, facts with their full
provenance, events, tokens, meta), and a last line with the row count and a SHA-256 of
the facts and of the events. An import checks the count and both checksums before it
writes, writes every row in one transaction, rebuilds the indexes, and checks the
checksums of what it wrote. Vectors are not exported: the next ``ingest`` (or ``embed``)
embeds the chunks again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import IO

from ..errors import Conflict, InvalidQuery
from ..store import Store, StoreReader

FORMAT = "knotwork-export"
VERSION = 1
_BATCH = 2000


def _canon(row: dict[str, object]) -> bytes:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def checksums(rows: Iterable[tuple[str, dict[str, object]]]) -> dict[str, object]:
    """The row count and the SHA-256 of the facts and of the events, in id order."""
    sums = {"facts": hashlib.sha256(), "events": hashlib.sha256()}
    n = 0
    for table, row in rows:
        n += 1
        if table in sums:
            sums[table].update(_canon(row) + b"\n")
    return {"rows": n, **{f"{t}_sha256": h.hexdigest() for t, h in sums.items()}}


def store_checksums(reader: StoreReader) -> dict[str, object]:
    return checksums(reader.export_rows())


def export_lines(store: Store) -> Iterator[str]:
    """The export, one JSON line at a time, read inside one snapshot of the store."""
    with store.snapshot():
        yield json.dumps({"format": FORMAT, "version": VERSION})
        seen: list[tuple[str, dict[str, object]]] = []
        for table, row in store.reader.export_rows():
            seen.append((table, row))
            yield json.dumps({"table": table, "row": row}, ensure_ascii=False)
        yield json.dumps({"checksum": checksums(seen)})


def import_lines(store: Store, lines: IO[str] | Iterable[str], *, actor: str
                 ) -> dict[str, object]:
    """Load an export into ``store``, which must hold no document, fact or event."""
    rows: list[tuple[str, dict[str, object]]] = []
    footer: dict[str, object] | None = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidQuery(f"line {n}: not JSON ({exc.msg})") from None
        if n == 1:
            if item.get("format") != FORMAT:
                raise InvalidQuery(f"line 1: not a knotwork export (format {FORMAT!r} expected)")
            if item.get("version") != VERSION:
                raise InvalidQuery(f"line 1: export version {item.get('version')!r} is not"
                                   f" {VERSION}")
            continue
        if "checksum" in item:
            footer = item["checksum"]
            continue
        if footer is not None:
            raise InvalidQuery(f"line {n}: rows after the checksum line")
        try:
            rows.append((str(item["table"]), dict(item["row"])))
        except (KeyError, TypeError, ValueError):
            raise InvalidQuery(f"line {n}: a row needs 'table' and 'row'") from None
    if footer is None:
        raise InvalidQuery("the export has no checksum line: it was cut short")
    given = checksums(rows)
    if given != footer:
        raise InvalidQuery(f"the export's rows do not match its checksum line ({given} !="
                           f" {footer}): the file was changed or cut")
    counts = store.reader.stats()
    if counts["documents"] or counts["facts"] or counts["retracted_facts"] or counts["events"]:
        raise Conflict("import needs an empty store: this one holds documents, facts or"
                       " events (use --db with a new file)")
    written: dict[str, int] = {}
    with store.write(actor=actor) as w:
        batch: list[dict[str, object]] = []
        table = None
        for t, row in [*rows, ("", {})]:
            if (t != table or len(batch) >= _BATCH) and batch and table is not None:
                written[table] = written.get(table, 0) + w.import_rows(table, batch)
                batch = []
            table = t
            batch.append(row)
        w.rebuild_indexes()
    after = store_checksums(store.reader)
    if after != footer:
        raise Conflict(f"the imported store's checksums differ from the export's: {after}")
    return {"rows": sum(written.values()), "tables": written, "checksum": after}
