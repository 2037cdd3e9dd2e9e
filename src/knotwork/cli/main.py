"""The ``knotwork`` command line: thin commands over the ``Knotwork`` facade.

Each command parses its options, makes one facade call and renders; ``--json`` prints
machine-readable output; errors print one line and exit non-zero (see ``EXIT_CODES``).
What comes from the store or the vault (paths, labels, text, reasons) is printed as it
is: escaped where a line carries Rich markup, else printed with markup off, so a note's
``[[kota]]`` or a folder named ``[/draft]`` is neither eaten as a style tag nor an error.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..core import Knotwork
from ..errors import ConfigError, InvalidQuery, KnotworkError, NotFound
from ..types import FactRow, Issue
from .usage import KnotworkGroup, knotwork_version

app = typer.Typer(name="knotwork", cls=KnotworkGroup, add_completion=False,
                  no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                  help="knotwork: a local-first context graph for AI agents.")
err = Console(stderr=True, soft_wrap=True)  # an error stays one line, however long
out = Console(highlight=False, soft_wrap=True)

EXIT_CODES: dict[type[KnotworkError], int] = {
    InvalidQuery: 2, ConfigError: 2, NotFound: 3, KnotworkError: 1,
}

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
ScopesOpt = Annotated[list[str] | None, typer.Option(
    "--scope", help="Read only these scopes (repeatable, or comma-separated; default:"
                    " --scope before the command, knotwork --scope S …, else every scope).")]
PatternOpt = Annotated[list[str] | None, typer.Option(
    "--pattern", help="Glob of the vault files read as notes (repeatable; default the"
                      " patterns setting, **/*.md).")]


class _State:
    db: str | None = None
    scope: str | None = None


state = _State()


def _print_version(value: bool) -> None:
    if value:
        out.print(f"knotwork {knotwork_version()}", markup=False)
        raise typer.Exit()


@app.callback()
def _main(db: Annotated[str | None, typer.Option(
              "--db", envvar="KNOTWORK_DB",
              help="Store file (default: the nearest .knotwork/store.db from the current"
                   " folder upward; ingest makes ./.knotwork/store.db).")
          ] = None,
          scope: Annotated[str | None, typer.Option(
              "--scope", envvar="KNOTWORK_SCOPE", help="Scope to write into and read from.")
          ] = None,
          version: Annotated[bool, typer.Option(
              "--version", is_eager=True, callback=_print_version,
              help="Print knotwork's version and exit.")] = False) -> None:
    state.db = db
    state.scope = scope


@contextmanager
def _kw(vault: str | None = None, *, patterns: list[str] | None = None,
        read_only: bool = False, ingest: str | None = None) -> Iterator[Knotwork]:
    """Open the facade, and turn any KnotworkError into one line and an exit code.

    With a vault (the server and watch commands) the store is ``--db`` if given, else the
    vault's own ``<vault>/.knotwork/store.db``. ``patterns`` (``--pattern``) replace the
    patterns setting, for the catch-up and the watcher alike. A command that only reads
    (``read_only``) refuses a store file that does not exist, instead of creating an
    empty one where a mistyped ``--db`` or the wrong folder points. Which store: see
    ``cli.where`` (``ingest``: the path ingested). A first ``ingest`` that fails leaves
    no store behind.
    """
    if vault is not None and not os.path.isdir(vault):
        raise typer.BadParameter(f"not a folder: {vault}", param_hint="--vault")
    overrides: dict[str, Any] = {"scope": state.scope} if state.scope else {}
    if patterns:
        if bad := [p for p in patterns if "," in p or not p.strip()]:
            raise typer.BadParameter(f"not a usable glob: {bad[0]!r} (one glob per --pattern,"
                                     " no commas)", param_hint="--pattern")
        overrides["patterns"] = ",".join(patterns)
    from . import where

    new_store: str | None = None
    if vault is not None:
        db = state.db
    elif ingest is not None:
        db = where.ingest_store(state.db, ingest, scope=state.scope or _scope_setting())
        if where.is_file_store(db) and not where.exists(db):
            if not os.path.exists(ingest):
                _fail(KnotworkError(f"not a folder or file: {ingest}"))  # and no store made
            new_store = db
    else:
        db = where.reading_store(state.db)
        if db is None:
            err.print(f"[red]error:[/red] no store in {escape(os.getcwd())} or above (no"
                      " .knotwork/store.db): run `knotwork ingest DIR` first, or pass --db",
                      highlight=False)
            raise typer.Exit(EXIT_CODES[NotFound])
    if read_only and db and (missing := _missing_store(db)):
        err.print(f"[red]error:[/red] no store at {escape(missing)}: run `knotwork ingest DIR`"
                  " first, or pass --db", highlight=False)
        raise typer.Exit(EXIT_CODES[NotFound])
    try:
        kw = Knotwork.open(vault, db=db, **overrides)
    except KnotworkError as exc:
        _fail(exc)
    try:
        yield kw
    except KnotworkError as exc:
        kw.close()
        if new_store is not None:  # the first sync failed: it leaves no store
            where.remove_new_store(new_store)
        _fail(exc)
    else:
        kw.close()


def _scope_setting() -> str:
    from ..config import Settings

    return Settings.from_env().scope


def _missing_store(db: str) -> str | None:
    """The path of a file store that does not exist yet, else None."""
    if db == ":memory:" or "://" in db.removeprefix("sqlite:///"):
        return None  # not a file (a server URL): its own driver says what is missing
    path = os.path.expanduser(db.removeprefix("sqlite:///"))
    return None if os.path.exists(path) else path


def _fail(exc: KnotworkError) -> None:
    code = next(c for t, c in EXIT_CODES.items() if isinstance(exc, t))
    err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
    raise typer.Exit(code)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _split(text: str | None) -> list[str] | None:
    """A comma-separated option as its items (None for none)."""
    items = [t.strip() for t in (text or "").split(",") if t.strip()]
    return items or None


def _scopes(given: list[str] | None = None) -> list[str] | None:
    """The scopes a read names: the command's own ``--scope`` (``a,b`` or repeated), else
    the global one."""
    return _split(",".join(given or ())) or ([state.scope] if state.scope else None)


@app.command()
def ingest(path: Annotated[str, typer.Argument(
               help="Folder (vault) to ingest, or one note in a vault ingested before.")],
           force: Annotated[bool, typer.Option("--force", "-f", help="Re-apply unchanged files.")]
           = False,
           dry_run: Annotated[bool, typer.Option("--dry-run", help="Report, write nothing.")]
           = False,
           pattern: PatternOpt = None,
           verbose: Annotated[bool, typer.Option(
               "--verbose", "-v", help="Print the files' problems even with --quiet.")] = False,
           quiet: Annotated[bool, typer.Option(
               "--quiet", "-q", help="Print nothing (with -v, only the problems).")]
           = False,
           no_embed: Annotated[bool, typer.Option(
               "--no-embed", help="Index text now, embed chunks later.")] = False,
           replace: Annotated[bool, typer.Option(
               "--replace", help="Make this folder the scope's vault though the scope holds"
                                 " another one (the notes this folder lacks are deleted).")]
           = False,
           as_json: JsonOpt = False) -> None:
    """Ingest a folder of Markdown, or one note of it, then embed the new chunks.

    Only what changed since the last ingest is applied."""
    # stop on SIGTERM as on Ctrl-C: the worker pool is shut down, nothing half written
    _stop_on_signals()
    show = not (quiet or as_json)
    phase = _Phase()
    try:
        with _kw(patterns=pattern, ingest=path) as kw, _bars(enabled=show) as bar:
            report = kw.ingest(path, force=force, dry_run=dry_run, embed=False,
                               replace=replace,
                               progress=phase.of("ingesting", bar("ingesting")),
                               mention_progress=phase.of("mentions", bar("finding mentions")))
            # what ``kw.ingest(embed=True)`` does, called apart to tell what it embedded
            embedded = (None if no_embed or dry_run
                        else kw.embed(progress=phase.of("embedding", bar("embedding"))))
    except KeyboardInterrupt:
        if not quiet:
            err.print(phase.stopped(path), highlight=False, markup=False)
        raise typer.Exit(130) from None
    if as_json:
        _print_json(report.as_dict())
        return
    if not quiet:
        reread = f" · reread {report.reread}" if report.reread else ""
        out.print(f"added {report.added} · updated {report.updated} · renamed {report.renamed}"
                  f" · deleted {report.deleted} · unchanged {report.unchanged}{reread}"
                  f" · facts +{report.facts_added} -{report.facts_retracted}"
                  f"{' (dry run)' if dry_run else ''}", markup=False)
        if report.reread and not force:
            out.print(f"({report.reread} unchanged notes were read again: they were extracted"
                      " under other rules or another chunk size than this knotwork's)",
                      markup=False)
        if embedded is not None and embedded.embedded:
            out.print(_embedded_line(embedded.embedded, embedded.embedder, embedded.workers,
                                     embedded.seconds), markup=False)
    for issue in report.errors if (verbose or not quiet) else ():
        _print_issue(issue)


def _print_issue(issue: Issue) -> None:
    """One problem with one file: where (yellow) and why, both printed as they are."""
    where = issue.path if issue.line is None else f"{issue.path}:{issue.line}"
    err.print(f"[yellow]{escape(where)}[/yellow]: {escape(issue.reason)}", highlight=False)


_REDRAWS_PER_S = 10


class _Phase:
    """Which phase of an ingest ran last, and how far it got: what a stop keeps."""

    def __init__(self) -> None:
        self.name = ""
        self.done = self.total = 0

    def of(self, name: str, shown: Callable[[int, int], None] | None
           ) -> Callable[[int, int], None]:
        def update(done: int, total: int) -> None:
            self.name, self.done, self.total = name, done, total
            if shown is not None:
                shown(done, total)

        return update

    def stopped(self, path: str) -> str:
        """What an ingest stopped now has kept, and how to go on (every write is whole)."""
        again = f"`knotwork ingest {shlex.quote(path)}`"
        if self.name == "embedding":
            return (f"stopped while embedding: the text index is complete and answers now;"
                    f" {self.done:,} of {self.total:,} chunks have vectors, kept. {again}"
                    " embeds the rest.")
        return f"stopped: what was written is kept and consistent; {again} goes on from there."


@contextmanager
def _bars(*, enabled: bool) -> Iterator[Callable[[str], Callable[[int, int], None] | None]]:
    """One live display of progress bars on a terminal: ``bar(label)`` makes a phase's
    callback, whose bar appears with its first update (a phase that never runs shows
    none).

    Drawn when told, at most ``_REDRAWS_PER_S`` times a second, never by rich's own
    refresh thread. Why: a sync forks its worker processes only from a process with no
    other thread (a fork copies the locks another thread may hold), so with that thread
    alive ``knotwork ingest`` on a terminal parsed and found mentions in one process,
    half the speed of the same ingest piped or run from Python on two cores.
    """
    if not enabled or not err.is_terminal:
        yield lambda label: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True,
                  auto_refresh=False) as bars:
        drawn = [0.0]

        def bar(label: str) -> Callable[[int, int], None]:
            task: list[TaskID] = []

            def update(done: int, total: int) -> None:
                if not task:
                    task.append(bars.add_task(label, total=total))
                bars.update(task[0], completed=done, total=total)
                now = time.monotonic()
                if done >= total or now - drawn[0] >= 1 / _REDRAWS_PER_S:
                    drawn[0] = now
                    bars.refresh()

            return update

        yield bar


@app.command()
def context(query: Annotated[str, typer.Argument(help="What the agent needs context about.")],
            depth: Annotated[int | None, typer.Option(
                "--depth", help="Link hops, 0-3 (default: the link_depth setting).")] = None,
            max_entities: Annotated[int | None, typer.Option(
                "--max-entities",
                help="Entities in the answer at most (default: the max_entities setting).")
            ] = None,
            max_tokens: Annotated[int | None, typer.Option(
                "--max-tokens", help="Cut the rendered answer to this many tokens.")] = None,
            as_of: Annotated[str | None, typer.Option(
                "--as-of", help="Answer as the store stood at this ISO time.")] = None,
            valid_at: Annotated[str | None, typer.Option(
                "--valid-at", help="Only facts that held in the world at this ISO date"
                " (a fact without valid time holds at every date).")] = None,
            trust: Annotated[str | None, typer.Option(
                "--trust", help="Only facts of these trust states, comma-separated:"
                " stated, asserted, extracted, unreviewed, approved, rejected.")] = None,
            min_confidence: Annotated[float, typer.Option(
                "--min-confidence", help="Leave out facts below this confidence (0-1).")]
            = 0.0,
            explain: Annotated[bool, typer.Option("--explain", help="Say why each scored.")]
            = False,
            scope: ScopesOpt = None,
            as_json: JsonOpt = False) -> None:
    """Ranked, cited context for a query (Markdown, or the KnowledgeContext as JSON)."""
    fmt = "json" if as_json else "markdown"
    with _kw(read_only=True) as kw:
        ctx = kw.context(query, link_depth=depth, max_entities=max_entities,
                         max_tokens=max_tokens, as_of=as_of, min_confidence=min_confidence,
                         valid_at=valid_at, trusts=_split(trust),
                         scopes=_scopes(scope), explain=explain, fmt=fmt)
        sys.stdout.write(kw.render(ctx, fmt).rstrip("\n") + "\n")


@app.command()
def search(query: Annotated[str, typer.Argument(help="Words to find in the notes' text.")],
           k: Annotated[int, typer.Option("--k", help="Number of chunks.")] = 10,
           mode: Annotated[str, typer.Option(
               "--mode", help="bm25 | vector | hybrid")] = "bm25",
           per_note: Annotated[int | None, typer.Option(
               "--per-note", min=1, help="At most this many hits of one note.")] = None,
           scope: ScopesOpt = None,
           as_json: JsonOpt = False) -> None:
    """Search chunks by BM25, vectors or both, with citations (path, heading, lines)."""
    with _kw(read_only=True) as kw:
        hits = kw.search(query, k=k, scopes=_scopes(scope), mode=mode, per_note=per_note)
        if mode == "hybrid" and kw.embedding_status() == "none":
            err.print("note: no chunk vectors: searched the full text only", highlight=False)
    if as_json:  # the shape REST and MCP answer with
        _print_json({"query": query, "hits": [h.as_dict() for h in hits]})
        return
    for h in hits:
        head = f" ({h.heading})" if h.heading else ""
        out.print(f"[bold]{escape(h.path)}:{h.line_start}-{h.line_end}[/bold]{escape(head)}"
                  f"  {h.score:.2f}")
        out.print("  " + " ".join(h.text.split())[:200], markup=False)


@app.command()
def entity(ref: Annotated[str, typer.Argument(help="Label, alias, name or iri.")],
           scope: ScopesOpt = None,
           as_json: JsonOpt = False) -> None:
    """One entity: names, types, facts and the facts that point at it."""
    with _kw(read_only=True) as kw:
        view = kw.entity(ref, scopes=_scopes(scope))
    if as_json:
        _print_json(view.as_dict())
        return
    e = view.entity
    kinds = ", ".join([e.kind, *view.types])
    out.print(f"[bold]{escape(e.label)}[/bold]  {escape(e.iri)}  ({escape(kinds)})")
    if view.names:
        out.print("names: " + ", ".join(f"{t} ({k})" for k, t in view.names), markup=False)
    _print_facts(list(view.facts))
    if view.incoming:
        out.print("referenced by:")
        for f in view.incoming:
            out.print(f"  {f.subject_label} —{f.predicate}→  {_where(f)}", markup=False)


@app.command()
def facts(ref: Annotated[str, typer.Argument(help="Label, alias, name or iri.")],
          history: Annotated[bool, typer.Option("--history", help="Include retracted facts.")]
          = False,
          as_of: Annotated[str | None, typer.Option(
              "--as-of", help="The facts as the store stood at this ISO time.")] = None,
          valid_at: Annotated[str | None, typer.Option(
              "--valid-at", help="Only facts that held in the world at this ISO date.")]
          = None,
          trust: Annotated[str | None, typer.Option(
              "--trust", help="Only facts of these trust states (comma-separated).")] = None,
          scope: ScopesOpt = None,
          as_json: JsonOpt = False) -> None:
    """Facts whose subject is the entity, with provenance."""
    with _kw(read_only=True) as kw:
        rows = kw.facts(ref, history=history, as_of=as_of, valid_at=valid_at,
                        trusts=_split(trust), scopes=_scopes(scope))
    if as_json:
        _print_json([f.as_dict() for f in rows])
        return
    _print_facts(rows)


def _where(f: FactRow) -> str:
    if not f.source or not f.source.path:
        return f"asserted by {f.actor}"
    return f"{f.source.path}:{f.source.line_start}"


def _print_facts(rows: list[FactRow]) -> None:
    for f in rows:
        value = f.value_label or f.value
        why = f" ({escape(f.retract_reason)})" if f.retract_reason else ""
        gone = f"  [red]retracted {f.retracted_at}{why}[/red]" if f.retracted_at else ""
        if f.valid_from or f.valid_to:
            gone = f"  valid {f.valid_from or '…'} – {f.valid_to or '…'}{gone}"
        state = f.trust if f.review == "approved" else f"{f.trust}/{f.review}"
        out.print(f"  #{f.id} {escape(f.predicate)} = {escape(value)}  [dim]{escape(state)}"
                  f" {f.confidence:.2f} {escape(_where(f))} recorded {f.recorded_at}[/dim]{gone}")


@app.command()
def reindex(embeddings: Annotated[bool, typer.Option(
                "--embeddings", help="Drop every vector and embed again (a model change).")]
            = False,
            as_json: JsonOpt = False) -> None:
    """Rebuild a derived index: today the chunk vectors (--embeddings)."""
    if not embeddings:
        err.print("nothing to do: pass --embeddings (the graph itself never needs a rebuild)")
        raise typer.Exit(2)
    with _kw(read_only=True) as kw, _bars(enabled=not as_json) as bar:
        result = kw.reindex_embeddings(progress=bar("embedding"))
    if as_json:
        _print_json(result.as_dict())
    else:
        out.print(_embedded_line(result.embedded, result.embedder, result.workers,
                                 result.seconds), markup=False)


def _embedded_line(embedded: int, embedder: str | None, workers: int, seconds: float) -> str:
    """``embedded N chunks with MODEL (K processes) in S s``: what an embedding run did."""
    processes = f" ({workers} processes)" if workers > 1 else ""
    return f"embedded {embedded} chunks with {embedder}{processes} in {seconds} s"


@app.command()
def compact(vacuum: Annotated[bool, typer.Option(
                "--vacuum", help="Also shrink the store file (it is copied whole: takes a"
                                 " while on a big store).")] = False,
            as_json: JsonOpt = False) -> None:
    """Give back the room history takes; answers, history and citations stay the same.

    Drops the chunks of past versions that no fact cites, and packs past versions' text."""
    with _kw(read_only=True) as kw:
        result = kw.compact(vacuum=vacuum)
    if as_json:
        _print_json(result.as_dict())
        return
    out.print(f"removed {result.chunks_removed} chunks of past versions that no fact cites"
              f" · packed {result.versions_packed} past versions' text"
              f" · {result.bytes_freed / 1e6:.1f} MB freed · store"
              f" {result.store_bytes / 1e6:.1f} MB", markup=False)


@app.command()
def stats(as_json: JsonOpt = False) -> None:
    """Counts of documents, chunks, entities, facts and events in the store."""
    with _kw(read_only=True) as kw:
        data = kw.stats()
    if as_json:
        _print_json(data.as_dict())
        return
    for key, value in data.as_dict().items():
        if key == "ambiguous_names":  # a summary: the first few, each with a few paths
            for amb in data.ambiguous_names[:_STATS_SHOWN]:
                more = f" (+{len(amb.paths) - 3} more)" if len(amb.paths) > 3 else ""
                out.print(f"ambiguous name {amb.name!r}: {', '.join(amb.paths[:3])}{more}",
                          markup=False)
            if len(data.ambiguous_names) > _STATS_SHOWN:
                out.print(f"… and {len(data.ambiguous_names) - _STATS_SHOWN} more ambiguous"
                          " names (--json lists them all)", markup=False)
        elif key == "warnings":
            for w in data.warnings:
                at = f"{w.path}:{w.line}" if w.line else w.path
                out.print(f"warning {at}: {w.reason}", markup=False)
        else:
            out.print(f"{key}: {value}", markup=False)


_STATS_SHOWN = 10  # ambiguous names ``stats`` prints (a vault had 12 KB of them)


def main() -> None:
    app(prog_name="knotwork")  # its usage and help say ``knotwork``, however it was started


def _stop_on_signals() -> None:
    """Make SIGINT and SIGTERM both raise KeyboardInterrupt in a long-running command.

    SIGINT is set too, not only SIGTERM: a command started in the background by a script
    (``knotwork watch … &``) inherits SIGINT *ignored*, and Python then installs no
    handler, so ``kill -INT`` would never stop it, and never let it close its store.
    """
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


# ---------------------------------------------------------------- long-running front ends
# Their heavier imports (FastAPI, uvicorn, the MCP SDK, Rich Live) are local, so the
# short commands above do not pay for them on every call.

VaultOpt = Annotated[str | None, typer.Option(
    "--vault", help="Vault folder: caught up at start, then watched. The store is the"
                    " vault's own (found at or above it, else <vault>/.knotwork/store.db)"
                    " unless --db is given; without --vault, the one found from the current"
                    " folder upward.")]


@app.command("mcp")
def mcp_command(vault: VaultOpt = None, pattern: PatternOpt = None) -> None:
    """Speak MCP on stdin/stdout for an agent; keeps the store in step with --vault."""
    from ..mcp import serve_stdio

    with _kw(vault, patterns=pattern) as kw:
        serve_stdio(kw, scopes=_scopes())


@app.command("serve")
def serve_command(
        vault: VaultOpt = None,
        host: Annotated[str, typer.Option(
            "--host", help="Address to bind; anything but loopback needs --token.")]
        = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535,
                                          help="Port to listen on.")] = 3030,
        token: Annotated[str | None, typer.Option(
            "--token", envvar="KNOTWORK_TOKEN", show_default=False,
            help="Every request must send 'Authorization: Bearer <token>' (this one, or"
                 " a token of 'knotwork token create', limited to its scopes).")] = None,
        pattern: PatternOpt = None) -> None:
    """Serve the REST API (OpenAPI at /docs); keeps the store in step with --vault."""
    from ..server import check_bind, serve

    try:
        check_bind(host, token)  # before opening anything: refuse an unsafe bind at once
    except KnotworkError as exc:
        _fail(exc)
    with _kw(vault, patterns=pattern) as kw:
        serve(kw, host=host, port=port, token=token, scopes=_scopes())


class _WatchStatus:
    """Counts what the watcher applied; shown as a live line, plain lines or JSON lines.

    ``applied`` runs on the watcher's thread, hence the lock.
    """

    def __init__(self, vault: str, *, as_json: bool) -> None:
        import threading

        self.vault, self.as_json = vault, as_json
        self.lock = threading.Lock()
        self.batches = self.files = self.facts_added = self.facts_retracted = self.errors = 0
        self.last = "nothing yet"

    def applied(self, report: Any) -> None:
        r = report
        with self.lock:
            self.batches += 1
            self.files += r.added + r.updated + r.deleted + r.renamed + r.reread
            self.facts_added += r.facts_added
            self.facts_retracted += r.facts_retracted
            self.errors += len(r.errors)
            reread = f" reread {r.reread}" if r.reread else ""
            self.last = (f"+{r.added} ~{r.updated} -{r.deleted} ↻{r.renamed}{reread}"
                         f" (facts +{r.facts_added} -{r.facts_retracted})")
            self.emit({"event": "applied", **r.as_dict()}, f"applied {self.last}")
        for issue in r.errors if not self.as_json else ():
            _print_issue(issue)

    def failed(self, exc: BaseException) -> None:
        with self.lock:
            self.errors += 1
            self.emit({"event": "error", "message": str(exc)},
                      f"[red]error:[/red] {escape(str(exc))}")

    def emit(self, data: dict[str, Any], line: str) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        elif not err.is_terminal:
            err.print(line, highlight=False)

    def render(self) -> str:
        with self.lock:
            return (f"[bold]watching[/bold] {escape(self.vault)} · last: {self.last} · total: "
                    f"{self.files} files, {self.batches} batches, {self.errors} errors"
                    " · Ctrl-C stops")


@app.command("watch")
def watch_command(
        vault: Annotated[str, typer.Option("--vault", help="Vault folder to keep in step.")],
        as_json: Annotated[bool, typer.Option(
            "--json", help="One JSON line per applied batch on stdout.")] = False,
        pattern: PatternOpt = None) -> None:
    """Keep the store in step with a vault as its files change (foreground; Ctrl-C stops)."""
    import time

    from rich.live import Live
    from rich.text import Text

    _stop_on_signals()
    status = _WatchStatus(vault, as_json=as_json)
    live = err.is_terminal and not as_json
    with _kw(vault, patterns=pattern) as kw:
        # catch up with what changed while nothing watched before the watcher's thread
        # starts: a sync forks its worker processes only from a process with no other
        # thread, and a first watch of a vault is a whole ingest
        status.applied(kw.ingest(embed=False))
        watcher = kw.watcher(on_report=status.applied, on_error=status.failed).start()
        try:
            # what changed while that ran, now that the watcher sees what comes next
            again = kw.ingest(embed=False)
            if again.errors or again.added + again.updated + again.deleted + again.renamed \
                    + again.reread:
                status.applied(again)
            kw.embed_in_background(status.failed)
            status.emit({"event": "watching", "vault": str(kw.vault)},
                        f"watching {escape(str(kw.vault))}")
            with Live(get_renderable=lambda: Text.from_markup(status.render()), console=err,
                      refresh_per_second=4, transient=False) if live else _nothing():
                while True:
                    time.sleep(0.25)
        except KeyboardInterrupt:
            pass
        finally:
            watcher.stop()
    if not as_json:
        err.print(f"stopped: {status.files} files applied in {status.batches} batches")


@contextmanager
def _nothing() -> Iterator[None]:
    yield


from . import add_context, assemble, check, find, llm, migrate, trust_commands, wiki  # noqa: E402,F401,I001

if __name__ == "__main__":
    # the module's own app: commands of other modules register on it, not on this copy
    from knotwork.cli.main import main as _module_main

    _module_main()
