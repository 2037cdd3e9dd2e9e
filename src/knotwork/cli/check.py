"""``knotwork check [--repair]``: verify the store's invariants, rebuild derived indexes."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from .main import JsonOpt, _kw, _print_json, app, err, out


@app.command("check")
def check_command(
        repair: Annotated[bool, typer.Option(
            "--repair", help="Rebuild the text indexes, the vector bookkeeping and the"
                             " mentions from the documents and facts, then check again.")]
        = False,
        sample: Annotated[int, typer.Option(
            "--sample", min=0, max=100_000,
            help="Live chunks looked up in the text index by their words.")] = 200,
        vectors: Annotated[int, typer.Option(
            "--vectors", min=0, max=10_000,
            help="Stored vectors embedded again and compared.")] = 32,
        as_json: JsonOpt = False) -> None:
    """Verify every invariant of the store; exit 1 when one is broken."""
    with _kw(read_only=True) as kw:
        report = kw.check(repair=repair, sample=sample, vectors=vectors)
    if as_json:
        _print_json(report.as_dict())
    else:
        if report.repaired is not None:
            done = ", ".join(f"{k} {v}" for k, v in report.repaired.items())
            out.print(f"repaired ({report.found_before_repair} problems found): {done}",
                      markup=False)
        for p in report.problems:
            err.print(f"[red]{escape(p.check)}[/red]: {escape(p.detail)}", highlight=False)
        for note in report.notes:
            out.print(note, markup=False)
        if report.ok:
            out.print(f"ok: every invariant holds ({report.vectors_compared} vectors"
                      " compared)", markup=False)
    if not report.ok:
        raise typer.Exit(1)
