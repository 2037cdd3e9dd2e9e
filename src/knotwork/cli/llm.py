"""``knotwork extract`` and ``knotwork ask``: the commands that use the configured model."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from .main import JsonOpt, _bars, _kw, _print_json, _scopes, app, err, out


@app.command()
def extract(path: Annotated[str | None, typer.Argument(
                help="Folder (vault) or one note to sync and extract from (default: every"
                     " note of the store's scope).")] = None,
            budget: Annotated[int | None, typer.Option(
                "--budget", min=1, help="Spend at most this many tokens (prompt +"
                                        " completion); a later run resumes.")] = None,
            no_ingest: Annotated[bool, typer.Option(
                "--no-ingest", help="Extract from the store as it is; do not sync PATH first.")]
            = False,
            as_json: JsonOpt = False) -> None:
    """Extract facts with the configured model (KNOTWORK_LLM_URL, KNOTWORK_LLM_MODEL).

    One call per chunk, cached by chunk text, model and prompt: a re-run, or an unchanged
    chunk, costs nothing. Facts arrive `extracted` and unreviewed."""
    with _kw(read_only=path is None) as kw, _bars(enabled=not as_json) as bar:
        report = kw.extract(path, budget=budget, ingest=not no_ingest,
                            progress=bar("extracting"))
    if as_json:
        _print_json(report.as_dict())
    else:
        dropped = ", ".join(f"{n} {why}" for why, n in sorted(report.dropped.items()))
        out.print(f"{report.documents_applied} of {report.documents} notes · chunks"
                  f" {report.chunks}: {report.cached} cached, {report.sent} sent ·"
                  f" {report.calls} calls · {report.total_tokens} tokens"
                  f" ({report.prompt_tokens} prompt, {report.completion_tokens} completion) ·"
                  f" facts +{report.facts_added} -{report.facts_retracted}"
                  f"{' · dropped ' + dropped if dropped else ''}", markup=False)
        if report.stopped == "budget":
            out.print(f"stopped at the budget of {report.budget} tokens:"
                      f" {report.documents_pending} notes wait; run again to resume",
                      markup=False)
    if report.stopped == "error":
        err.print(f"[red]error:[/red] {escape(report.error or '')}", highlight=False)
        raise typer.Exit(1)


@app.command()
def ask(question: Annotated[str, typer.Argument(help="A question about the notes.")],
        max_tokens: Annotated[int, typer.Option(
            "--max-tokens", min=200, help="Token budget of the context given to the model.")]
        = 3000,
        as_json: JsonOpt = False) -> None:
    r"""Answer from the notes only, citing \[path:line], or say it cannot.

    Every citation is checked against the store; one that does not hold is flagged."""
    with _kw(read_only=True) as kw:
        answer = kw.ask(question, max_tokens=max_tokens, scopes=_scopes())
    if as_json:
        _print_json(answer.as_dict())
        return
    out.print(answer.answer, markup=False)
    for c in answer.citations:
        if not c.ok:
            err.print(f"[yellow]flagged[/yellow] [{escape(c.text)}]: {escape(c.problem or '')}",
                      highlight=False)
    if answer.uncited:
        err.print("[yellow]flagged[/yellow]: the answer cites nothing", highlight=False)
