"""``knotwork add-context``: project documents into typed records (ADRs, specs, KEPs…)."""

from __future__ import annotations

from typing import Annotated

import typer

from .main import JsonOpt, PatternOpt, _bars, _kw, _print_issue, _print_json, app, out


@app.command("add-context")
def add_context(
    path: Annotated[str, typer.Argument(help="Folder of project documents, or one file.")],
    type: Annotated[str | None, typer.Option(
        "--type", help="Read every file with this parser (adr, feature-spec, overview, kep,"
                       " rfc, note), not the one detected.")] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Parse and apply unchanged"
                                                              " files again.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be added;"
                                                            " write nothing.")] = False,
    pattern: PatternOpt = None,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", help="Scopes are {namespace}__{category}; default the project"
                            " folder's name.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="One line per file.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    no_embed: Annotated[bool, typer.Option(
        "--no-embed", help="Leave the new chunks without vectors (embed later).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Add project documents as typed records: ADRs, feature specs, overviews, KEPs,
    RFCs and other docs, each in scope {namespace}__{category}.

    Exits 1 when any file could not be read."""
    show = not (quiet or as_json)
    with _kw(patterns=pattern) as kw, _bars(enabled=show) as bar:
        report = kw.add_context(path, namespace=namespace, type=type, force=force,
                                dry_run=dry_run, patterns=pattern, progress=bar("parsing"),
                                embed=not no_embed, embed_progress=bar("embedding"))
    if as_json:
        _print_json(report.as_dict())
    elif not quiet:
        if verbose:
            for rel, (kind, scope, records) in sorted(report.parsed.items()):
                out.print(f"{rel}: {kind} → {scope} ({records} record"
                          f"{'s' if records != 1 else ''})", markup=False)
        tail = " (dry run: nothing written)" if dry_run else ""
        gone = f" · deleted {report.deleted}" if report.deleted else ""
        out.print(f"files {report.files} · records added {report.records_added} · updated"
                  f" {report.records_updated} · unchanged {report.unchanged}{gone} ·"
                  f" warnings {len(report.warnings)} · errors {len(report.errors)}{tail}",
                  markup=False)
        for issue in report.warnings if verbose else ():
            _print_issue(issue)
    if not as_json:
        for issue in report.errors:
            _print_issue(issue)
    if report.errors:
        raise typer.Exit(1)
