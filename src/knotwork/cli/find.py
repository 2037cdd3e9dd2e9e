"""``knotwork find`` (entities by their facts) and ``knotwork changes`` (what changed).

Registered on the ``knotwork`` app by importing this module (``cli/main.py``'s last line).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .main import JsonOpt, ScopesOpt, _kw, _print_json, _scopes, app, err, out


@app.command()
def find(where: Annotated[list[str] | None, typer.Option(
             "--where", "-w", help="KEY=VALUE a live fact must say (repeatable: all must"
             " hold); KEY alone: any value; VALUE as [[Name]]: that entity only.")] = None,
         type: Annotated[str | None, typer.Option(
             "--type", "-t", help="Only entities of this type (adr, service, ...).")] = None,
         scope: ScopesOpt = None,
         limit: Annotated[int, typer.Option("--limit", help="At most this many (1-500).")]
         = 50,
         as_json: JsonOpt = False) -> None:
    """Entities whose live facts say KEY=VALUE, with each fact's source line."""
    with _kw(read_only=True) as kw:
        found = kw.find(where or [], type=type, scopes=_scopes(scope), limit=limit)
    if as_json:
        _print_json(found.as_dict())
        return
    for e in found.entities:
        kinds = f" ({', '.join(e.types)})" if e.types else ""
        out.print(f"{e.label}{kinds}  {e.iri}", markup=False)
        for f in e.facts:
            src = f.source
            where_ = f"{src.path}:{src.line_start}" if src and src.path else f"by {f.actor}"
            quote = " ".join(src.supporting_text.split())[:120] if src else ""
            out.print(f"  {f.predicate} = {f.value_label or f.value}  {where_}"
                      + (f"  “{quote}”" if quote else ""), markup=False)
    if found.truncated:
        err.print(f"(the first {found.limit}: --limit cut the rest)", highlight=False)
    elif not found.entities:
        err.print("no entity matches", highlight=False)


@app.command()
def changes(since: Annotated[str, typer.Option(
                "--since", help="A span back from now (7d, 12h, 30m, 2w) or an ISO time.")]
            = "1d",
            limit: Annotated[int, typer.Option("--limit", help="At most this many (1-1000).")]
            = 100,
            as_json: JsonOpt = False) -> None:
    """Notes created, edited, renamed or deleted since a time, newest first, and by whom."""
    with _kw(read_only=True) as kw:
        got = kw.recent_changes(since=since, limit=limit, scopes=_scopes())
    if as_json:
        _print_json(got.as_dict())
        return
    for c in got.changes:
        moved = f" (from {c.previous_path})" if c.previous_path else ""
        out.print(f"{c.at}  {c.change:<8} {c.path}{moved}  by {c.actor}", markup=False)
    if got.truncated:
        err.print(f"(the newest {got.limit}: --limit cut older ones)", highlight=False)
