"""``knotwork migrate``: copy a store between backends, verified by counts and checksum."""

from __future__ import annotations

from typing import Annotated

import typer

from ..core import migrate_store
from ..errors import KnotworkError
from .main import JsonOpt, _fail, _print_json, app, out


@app.command()
def migrate(source: Annotated[str, typer.Option(
                "--from", help="Store to copy: a SQLite file (sqlite:///path) or postgresql://...")],
            target: Annotated[str, typer.Option(
                "--to", help="Empty store to copy it into (created if a file): a path or URL.")],
            json_out: JsonOpt = False) -> None:
    """Copy a store to another backend exactly (history, events, vectors and all), then
    check the copy's row counts and checksum against the original's."""
    try:
        before, after = migrate_store(source, target)
    except KnotworkError as exc:
        _fail(exc)
        return
    if json_out:
        _print_json({"from": source, "to": target, "counts": before.counts,
                     "checksum": before.checksum, "verified": before == after})
        return
    for table, n in before.counts.items():
        out.print(f"{table:16} {n:>10,}")
    out.print(f"checksum {before.checksum} (source) = {after.checksum} (copy): verified")
