"""The trust commands: ``review``, ``token``, ``audit``, ``history``, ``export``, ``import``.

Registered on the ``knotwork`` app by importing this module (``cli/main.py``'s last line).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .. import limits as L
from ..errors import InvalidQuery
from ..types import FactRow
from .main import JsonOpt, _fail, _kw, _print_facts, _print_json, _scopes, _split, app, out

review_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                         help="The review queue: list, approve and reject facts.")
token_app = typer.Typer(no_args_is_help=True, help="API tokens for REST and the web page.")
app.add_typer(review_app, name="review")
app.add_typer(token_app, name="token")

StatusOpt = Annotated[str, typer.Option(
    "--status", help="Review statuses to list (comma-separated).")]
TrustOpt = Annotated[str | None, typer.Option(
    "--trust", help="How the facts came in: asserted, extracted, stated (comma-separated).")]
PredicateOpt = Annotated[str | None, typer.Option("--predicate", help="Only this predicate.")]
EntityOpt = Annotated[str | None, typer.Option("--entity", help="Only facts about it.")]
ReasonOpt = Annotated[str | None, typer.Option("--reason", help="Why (in the audit log).")]
ReviewerOpt = Annotated[str | None, typer.Option(
    "--reviewer", help="Who decides (default: the actor setting).")]
IdsArg = Annotated[list[int] | None, typer.Argument(help="Fact ids; none: --all-matching.")]
AllOpt = Annotated[bool, typer.Option(
    "--all-matching", help="Every fact the filter selects (--status, --trust, ...).")]


def _print_review(rows: tuple[FactRow, ...]) -> None:
    for f in rows:
        value = f.value_label or f.value
        where = (f"{f.source.path}:{f.source.line_start}" if f.source and f.source.path
                 else f"asserted by {f.actor}")
        out.print(f"#{f.id} {escape(f.subject_label)} —{escape(f.predicate)}→ {escape(value)}"
                  f"  [dim]{f.trust}/{f.review} {f.confidence:.2f} {escape(where)}[/dim]")
        if f.source and f.source.supporting_text:
            out.print(f"    > {' '.join(f.source.supporting_text.split())[:300]}",
                      markup=False)


@review_app.callback()
def review_list(ctx: typer.Context, status: StatusOpt = "unreviewed", trust: TrustOpt = None,
                predicate: PredicateOpt = None, entity: EntityOpt = None,
                limit: Annotated[int, typer.Option("--limit", min=1,
                                                   help="Facts per page.")] = 50,
                offset: Annotated[int, typer.Option("--offset", min=0, max=L.OFFSET_MAX,
                                                    help="Skip this many facts.")] = 0,
                as_json: JsonOpt = False) -> None:
    """List the facts awaiting review, each with its evidence (the default action)."""
    if ctx.invoked_subcommand is not None:
        return
    with _kw(read_only=True) as kw:
        page = kw.review_queue(status=_split(status) or ["unreviewed"],
                               trusts=_split(trust) or [], predicate=predicate,
                               entity=entity, scopes=_scopes(), limit=limit, offset=offset)
    if as_json:
        _print_json(page.as_dict())
        return
    _print_review(page.facts)
    more = f" · next: --offset {page.next_offset}" if page.next_offset is not None else ""
    out.print(f"[dim]{len(page.facts)} of {page.total}{more}[/dim]")


def _decide(decision: str, ids: list[int] | None, all_matching: bool, status: str,
            trust: str | None, predicate: str | None, entity: str | None,
            reason: str | None, reviewer: str | None, as_json: bool) -> None:
    with _kw() as kw:
        if not ids and not all_matching:
            _fail(InvalidQuery(f"name the facts to {decision} (ids), or pass --all-matching"
                               " with a filter"))
        done = kw.review(decision, ids or (), status=_split(status), trusts=_split(trust) or [],
                         predicate=predicate, entity=entity, scopes=_scopes(), reason=reason,
                         reviewer=reviewer)
    if as_json:
        _print_json(done.as_dict())
        return
    out.print(f"{done.status} {len(done.fact_ids)} fact(s) as {done.reviewer}", markup=False)


@review_app.command("approve")
def approve(ids: IdsArg = None, all_matching: AllOpt = False, status: StatusOpt = "unreviewed",
            trust: TrustOpt = None, predicate: PredicateOpt = None, entity: EntityOpt = None,
            reason: ReasonOpt = None, reviewer: ReviewerOpt = None,
            as_json: JsonOpt = False) -> None:
    """Approve facts: one, many, or every one a filter selects."""
    _decide("approve", ids, all_matching, status, trust, predicate, entity, reason, reviewer,
            as_json)


@review_app.command("reject")
def reject(ids: IdsArg = None, all_matching: AllOpt = False, status: StatusOpt = "unreviewed",
           trust: TrustOpt = None, predicate: PredicateOpt = None, entity: EntityOpt = None,
           reason: ReasonOpt = None, reviewer: ReviewerOpt = None,
           as_json: JsonOpt = False) -> None:
    """Reject facts: they leave every answer (history keeps them)."""
    _decide("reject", ids, all_matching, status, trust, predicate, entity, reason, reviewer,
            as_json)


@token_app.command("create")
def token_create(scopes: Annotated[str, typer.Option(
                     "--scopes", help="The scopes it may read and write, comma-separated.")],
                 name: Annotated[str, typer.Option("--name", help="What it is for.")] = "api",
                 read_only: Annotated[bool, typer.Option(
                     "--read-only", help="It may read, never write.")] = False,
                 as_json: JsonOpt = False) -> None:
    """Create a token; its secret is printed once and stored only as a hash."""
    with _kw() as kw:
        info = kw.create_token(name, scopes=_split(scopes) or [], read_only=read_only)
    if as_json:
        _print_json(info.as_dict())
        return
    out.print(info.secret or "", markup=False)
    sys.stderr.write(f"token #{info.id} {info.name}: scopes {','.join(info.scopes)}"
                     f"{' read-only' if info.read_only else ''} (the secret is shown only"
                     " now)\n")


@token_app.command("list")
def token_list(as_json: JsonOpt = False) -> None:
    """The tokens (never their secrets), revoked ones too."""
    with _kw(read_only=True) as kw:
        rows = kw.tokens()
    if as_json:
        _print_json([t.as_dict() for t in rows])
        return
    for t in rows:
        gone = f"  revoked {t.revoked_at}" if t.revoked_at else ""
        out.print(f"#{t.id} {t.name}  scopes {','.join(t.scopes)}"
                  f"{'  read-only' if t.read_only else ''}  created {t.created_at}{gone}",
                  markup=False)


@token_app.command("revoke")
def token_revoke(token_id: Annotated[int, typer.Argument(help="The token's id.")],
                 as_json: JsonOpt = False) -> None:
    """Revoke a token: every request with it is refused from now on."""
    with _kw() as kw:
        info = kw.revoke_token(token_id)
    if as_json:
        _print_json(info.as_dict())
        return
    out.print(f"revoked #{info.id} {info.name} at {info.revoked_at}", markup=False)


@app.command()
def audit(since: Annotated[str | None, typer.Option(
              "--since", help="A span back from now (7d, 12h, 30m, 2w) or an ISO time.")]
          = None,
          limit: Annotated[int, typer.Option("--limit", min=1,
                                             help="The newest this many events.")] = 1000,
          as_json: JsonOpt = False) -> None:
    """The audit log: every mutation (who, what, when, why), oldest first."""
    with _kw(read_only=True) as kw:
        rows = kw.audit(since=since, limit=limit)
    if as_json:
        _print_json(rows)
        return
    for e in rows:
        target = (f" fact #{e['fact_id']}" if e["fact_id"] else
                  f" document #{e['document_id']}" if e["document_id"] else "")
        why = f" — {e['reason']}" if e["reason"] else ""
        out.print(f"{e['at']} {e['actor']} {e['action']}{target}{why}", markup=False)


@app.command()
def history(ref: Annotated[str, typer.Argument(help="Label, alias, name or iri.")],
            as_json: JsonOpt = False) -> None:
    """Every fact ever recorded about an entity: who recorded it, when, from which
    text, and when and why it was retracted; with the events that touched them."""
    with _kw(read_only=True) as kw:
        page = kw.history(ref, scopes=_scopes())
    if as_json:
        _print_json(page.as_dict())
        return
    for f in page.facts:
        _print_facts([f])
        quote = " ".join(f.source.supporting_text.split())[:200] if f.source else ""
        out.print(f"      by {f.actor or '?'} ({f.extractor}){': ' + quote if quote else ''}",
                  markup=False)
    for e in page.events:
        why = f" — {e['reason']}" if e.get("reason") else ""
        out.print(f"  {e['at']} {e['actor']} {e['action']} #{e['fact_id']}{why}", markup=False)


@app.command("export")
def export_command(jsonl: Annotated[bool, typer.Option(
                       "--jsonl", help="JSON lines (the one format).")] = True,
                   output: Annotated[Path | None, typer.Option(
                       "--output", "-o", help="Write here instead of stdout.")] = None
                   ) -> None:
    """Export the store as JSON lines: documents, versions, facts with provenance, events."""
    with _kw(read_only=True) as kw:
        lines = kw.export_jsonl()
        if output is None:
            for line in lines:
                sys.stdout.write(line + "\n")
            return
        with output.open("w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line + "\n")


@app.command("import")
def import_command(path: Annotated[Path, typer.Argument(
                       help="An export (knotwork export --jsonl); - reads stdin.")],
                   as_json: JsonOpt = False) -> None:
    """Import an export into an empty store (--db); checksums are checked."""
    with _kw() as kw:
        if str(path) == "-":
            done = kw.import_jsonl(sys.stdin)
        else:
            with path.open(encoding="utf-8") as fh:
                done = kw.import_jsonl(fh)
    if as_json:
        _print_json(done)
        return
    out.print(f"imported {done['rows']} rows", markup=False)
