"""How ``knotwork`` answers a command line it cannot run: one line, and ``--version``
everywhere.

A usage error (an unknown option, a missing argument, a bad value) prints one line on
stderr and exits 2::

    knotwork: error: No such option: --frob (try 'knotwork context --help')

Why: Typer drew it as a usage line, a hint and a Rich box, six lines for one fact that a
script's log or an agent's tool output had to carry whole. ``--version`` is taken by
every command and group (``knotwork context --version``), as ``-h`` is.

``KnotworkGroup`` is the app's click group (``typer.Typer(cls=...)``); it sees every
command's parsing and running, since a group parses its subcommands in ``invoke``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup, TyperOption


def knotwork_version() -> str:
    try:
        return version("knotwork")
    except PackageNotFoundError:
        return "unknown"


def _print_version(ctx: Any, _param: Any, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(f"knotwork {knotwork_version()}")
        raise typer.Exit()


def _with_version(command: Any) -> None:
    """Give ``command`` (and, for a group, each of its commands) a ``--version``."""
    if not any("--version" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(TyperOption(
            param_decls=["--version"], is_flag=True, expose_value=False, is_eager=True,
            callback=_print_version, help="Print knotwork's version and exit."))
    for sub in getattr(command, "commands", {}).values():
        _with_version(sub)


def _command_line(ctx: Any) -> str:
    """``knotwork wiki write`` for the context of ``wiki write``, however it was started
    (``python -m knotwork.cli.main`` too)."""
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(["knotwork", *reversed(names)])


def _usage_error(exc: typer.TyperException) -> NoReturn:
    ctx = getattr(exc, "ctx", None)
    message = " ".join(exc.format_message().split())  # one line, whatever it held
    hint = f" (try '{_command_line(ctx)} --help')" if ctx is not None else ""
    typer.echo(f"knotwork: error: {message}{hint}", err=True)
    raise typer.Exit(exc.exit_code)


def _is_help(exc: Exception) -> bool:
    # a group called with nothing prints its help (no_args_is_help): not an error line;
    # matched by name, as Typer does, since the class is in its private click copy
    return type(exc).__name__ == "NoArgsIsHelpError"


class KnotworkGroup(TyperGroup):
    """The ``knotwork`` group: usage errors in one line, ``--version`` on every command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            _with_version(command)

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except typer.TyperException as exc:
            if _is_help(exc):
                raise
            _usage_error(exc)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as exc:
            if _is_help(exc):
                raise
            _usage_error(exc)
