"""``knotwork lint`` and ``knotwork wiki list|show|search|log|write``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .main import JsonOpt, _kw, _print_json, app, err, out

wiki_app = typer.Typer(no_args_is_help=True, help="Read and write the vault's wiki pages.")
app.add_typer(wiki_app, name="wiki")

WikiVault = Annotated[str, typer.Option(
    "--vault", help="Vault folder whose wiki to use (default: the current folder). The store"
                    " defaults to <vault>/.knotwork/store.db unless --db is given.")]
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


@app.command("lint")
def lint_command(
        vault: Annotated[str | None, typer.Option(
            "--vault", help="Vault to lint: caught up first (default: lint the store as it"
                            " is, without the wiki's own checks).")] = None,
        kind: Annotated[list[str] | None, typer.Option(
            "--kind", help="Only this kind of finding (repeatable).")] = None,
        min_confidence: Annotated[float | None, typer.Option(
            "--min-confidence", help="Confidence floor of cited facts (default the"
                                     " min_confidence setting, 0.6).")] = None,
        fix: Annotated[bool, typer.Option(
            "--fix", help="Apply the safe fixes first (write index.md again).")] = False,
        no_sync: Annotated[bool, typer.Option(
            "--no-sync", help="Do not catch up with the vault before linting.")] = False,
        as_json: JsonOpt = False) -> None:
    """Find broken links, missing, orphan and isolated pages, duplicates, contradictions,
    stale claims and low-confidence facts; exit 1 when any is an error."""
    with _kw(vault) as kw:
        if vault is not None and not no_sync:
            kw.ingest(embed=False)
        if fix and vault is not None:
            for line in kw.fix_wiki():
                err.print(f"fixed: {escape(line)}", highlight=False)
            if not no_sync:
                kw.ingest(embed=False)
        findings = kw.lint(kinds=kind, min_confidence=min_confidence)
    if as_json:
        _print_json({"findings": [f.as_dict() for f in findings]})
    else:
        for f in findings:
            where = f"{f.path}:{f.line}" if f.line else (f.path or "(store)")
            style = SEVERITY_STYLE.get(f.severity, "white")
            out.print(f"{escape(where)}: [{style}]{f.severity}[/{style}] {f.kind}:"
                      f" {escape(f.message)}")
            out.print(f"  fix: {escape(f.fix)}" + (" (--fix)" if f.fixable else ""),
                      markup=True)
        counts = {s: sum(1 for f in findings if f.severity == s)
                  for s in ("error", "warning", "info")}
        err.print(f"{len(findings)} findings: " + ", ".join(f"{n} {s}"
                                                            for s, n in counts.items()))
    raise typer.Exit(1 if any(f.severity == "error" for f in findings) else 0)


@wiki_app.command("list")
def wiki_list(category: Annotated[str | None, typer.Argument(help="Only this category.")
                                  ] = None,
              vault: WikiVault = ".", as_json: JsonOpt = False) -> None:
    """List the wiki's pages by category."""
    with _kw(vault) as kw:
        pages = kw.list_pages(category)
    if as_json:
        _print_json([p.as_dict() for p in pages])
        return
    for p in pages:
        out.print(f"{p.category:8} {p.path}  {p.title}" + (f" — {p.summary}" if p.summary
                                                          else ""), markup=False)


@wiki_app.command("show")
def wiki_show(category: Annotated[str, typer.Argument(help="summary, entity, topic, …")],
              title: Annotated[str, typer.Argument(help="The page's title.")],
              vault: WikiVault = ".", as_json: JsonOpt = False) -> None:
    """Print one page."""
    with _kw(vault) as kw:
        page = kw.read_page(category, title)
    if as_json:
        _print_json(page.as_dict())
    else:
        sys.stdout.write(page.content)


@wiki_app.command("search")
def wiki_search(query: Annotated[str, typer.Argument(help="Words to find in the pages.")],
                k: Annotated[int, typer.Option("--k", help="Pages to return.")] = 10,
                vault: WikiVault = ".", as_json: JsonOpt = False) -> None:
    """Search the wiki's pages (the fast path before the whole graph)."""
    with _kw(vault) as kw:
        hits = kw.search_wiki(query, k=k)
    if as_json:
        _print_json([h.as_dict() for h in hits])
        return
    for h in hits:
        out.print(f"{h.score:6.2f}  {h.path}:{h.line_start}-{h.line_end}  {h.title}",
                  markup=False)
        out.print(f"        {h.snippet}", markup=False)


@wiki_app.command("log")
def wiki_log(last: Annotated[int, typer.Option("--last", "-n", help="Entries to show.")] = 20,
             vault: WikiVault = ".", as_json: JsonOpt = False) -> None:
    """Show the last changes to the wiki (log.md)."""
    with _kw(vault) as kw:
        entries = kw.get_log(last)
    if as_json:
        _print_json([e.as_dict() for e in entries])
        return
    for e in entries:
        out.print(f"{e.at}  {e.actor}  {e.action:9} {e.path}  {e.title}", markup=False)


@wiki_app.command("write")
def wiki_write(category: Annotated[str, typer.Argument(help="summary, entity, topic, …")],
               title: Annotated[str, typer.Argument(help="The page's title.")],
               file: Annotated[str, typer.Option(
                   "--file", "-f", help="Markdown file with the page's content ('-': stdin).")
               ] = "-",
               summary: Annotated[str, typer.Option(
                   "--summary", help="One line for index.md.")] = "",
               vault: WikiVault = ".", as_json: JsonOpt = False) -> None:
    """Write (or rewrite) a page: ingested at once, listed in index.md, logged."""
    try:
        content = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {file}: {exc}", param_hint="--file") from exc
    with _kw(vault) as kw:
        written = kw.write_wiki_page(category, title, content, summary=summary)
    if as_json:
        _print_json(written.as_dict())
    else:
        out.print(f"{written.status} {written.path} · facts +{written.facts_added}"
                  f" -{written.facts_retracted}", markup=False)
