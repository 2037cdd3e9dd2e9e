"""``knotwork assemble``: context from tiers of sources, fitted to a token budget."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..assemble import AssembleConfig, load_config
from ..core import Knotwork
from ..errors import KnotworkError
from .main import JsonOpt, _fail, _kw, _missing_store, _print_json, _scopes, app, err, state

DEFAULT_FILE = "knotwork.toml"


@app.command("assemble")
def assemble_command(
        query: Annotated[str, typer.Argument(help="What the agent needs context about.")],
        config: Annotated[str | None, typer.Option(
            "--config", "-c", help="TOML file of tiers and budget (default: the"
                                   " assemble_config setting, else ./knotwork.toml if there,"
                                   " else one tier: this store).")] = None,
        max_tokens: Annotated[int | None, typer.Option(
            "--max-tokens", help="Token budget of the rendered text (0 = none; default:"
                                 " the config's).")] = None,
        allow_partial: Annotated[bool | None, typer.Option(
            "--allow-partial/--no-allow-partial",
            help="Cut an item that does not fit at a sentence boundary.")] = None,
        top_k: Annotated[list[str] | None, typer.Option(
            "--top-k", help="TIER=N: this tier's item cap for this call (repeatable).")]
        = None,
        min_score: Annotated[list[str] | None, typer.Option(
            "--min-score", help="TIER=X: drop this tier's items scored below X (repeatable).")]
        = None,
        as_json: JsonOpt = False) -> None:
    """Context from tiers of sources queried in parallel, merged, deduplicated and cut to a
    token budget (Markdown citing each item, or JSON)."""
    tiers: dict[str, dict[str, Any]] = {}
    for opt, key, kind in (("--top-k", "top_k", int), ("--min-score", "min_score", float)):
        for raw in (top_k if key == "top_k" else min_score) or []:
            name, sep, value = raw.partition("=")
            try:
                tiers.setdefault(name.strip(), {})[key] = kind(value)
                if not sep or not name.strip():
                    raise ValueError
            except ValueError:
                raise typer.BadParameter(f"{raw!r} is not TIER={kind.__name__.upper()}",
                                         param_hint=opt) from None
    cfg = _config(config)
    with _open(cfg) as kw:
        out = kw.assemble(query, config=cfg, max_tokens=max_tokens,
                          allow_partial=allow_partial, tiers=tiers, scopes=_scopes())
        if as_json:
            _print_json(out.as_dict())
        else:
            sys.stdout.write(out.text)
            for e in out.errors:
                err.print(f"[yellow]warning:[/yellow] tier {escape(e.tier)}, source"
                          f" {escape(e.source)}: {escape(e.reason)}", highlight=False)
        if out.overrun:
            err.print(f"[yellow]note:[/yellow] pinned items exceed max_tokens {out.max_tokens}"
                      f" by {out.overrun} tokens", highlight=False)


def _config(path: str | None) -> AssembleConfig | None:
    path = path or os.environ.get("KNOTWORK_ASSEMBLE_CONFIG") or (
        DEFAULT_FILE if os.path.isfile(DEFAULT_FILE) else None)
    if path is None:
        return None
    try:
        return load_config(path)
    except KnotworkError as exc:
        _fail(exc)
        raise  # unreachable: _fail exits


@contextmanager
def _open(cfg: AssembleConfig | None) -> Iterator[Knotwork]:
    """The facade: on the store when a tier reads it (which must then exist), else on an
    empty in-memory one (a config of remote sources needs no store, and makes none)."""
    if cfg is not None and not cfg.uses("local") and _missing_store(
            state.db or ".knotwork/store.db"):
        saved, state.db = state.db, ":memory:"
        try:
            with _kw() as kw:
                yield kw
        finally:
            state.db = saved
        return
    with _kw(read_only=True) as kw:
        yield kw
