"""A command line knotwork cannot run gets one line on stderr and exit 2; every command
takes ``-h`` and ``--version``; help shows the defaults.

Through Typer's runner and once as a real process. Before, a usage error was a usage
line, a hint and a six-line Rich box.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from knotwork import __version__
from knotwork.cli.main import app

runner = CliRunner()

BAD = [
    (["context", "--frob"], "No such option: --frob", "knotwork context"),
    (["context"], "Missing argument 'query'", "knotwork context"),
    (["context", "x", "--max-entities", "abc"], "'abc' is not a valid int", "knotwork context"),
    (["no-such-command"], "No such command 'no-such-command'", "knotwork"),
    (["--frob"], "No such option: --frob", "knotwork"),
    (["token", "create", "--frob"], "No such option: --frob", "knotwork token create"),
    (["serve", "--port", "0"], "'--port'", "knotwork serve"),
]


@pytest.mark.parametrize(("args", "says", "command"), BAD)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], says: str, command: str
                                              ) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("knotwork: error: ") and says in lines[0], lines[0]
    assert lines[0].endswith(f"(try '{command} --help')"), lines[0]
    assert "╭" not in res.stderr and "│" not in res.stderr


def test_a_usage_error_from_a_real_process() -> None:
    done = subprocess.run([sys.executable, "-m", "knotwork.cli.main", "context", "--frob"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == ("knotwork: error: No such option: --frob"
                           " (try 'knotwork context --help')\n")


def _commands() -> list[tuple[list[str], Any]]:
    """Every command and group of the app: the words that name it, and it."""
    found: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return found


def _command_lines() -> list[list[str]]:
    """Every command and group of the app, as the words that name it."""
    return [path for path, _ in _commands()]


def test_every_command_takes_h_and_version() -> None:
    lines = _command_lines()
    assert ["context"] in lines and ["token", "create"] in lines and len(lines) > 20
    for words in lines:
        helped = runner.invoke(app, [*words, "-h"])
        assert helped.exit_code == 0, (words, helped.output)
        assert f"Usage: knotwork {' '.join(words)}".rstrip() in " ".join(helped.stdout.split())
        shown = runner.invoke(app, [*words, "--version"])
        assert shown.exit_code == 0, (words, shown.output)
        assert shown.stdout == f"knotwork {__version__}\n", words


def test_help_shows_the_defaults() -> None:
    serve = " ".join(runner.invoke(app, ["serve", "-h"]).stdout.split())
    assert "[default: 3030]" in serve and "[default: 127.0.0.1]" in serve
    context = " ".join(runner.invoke(app, ["context", "-h"]).stdout.split())
    assert "[default: 0.0]" in context


def test_every_commands_help_shows_its_first_line_as_written() -> None:
    # Rich reads "[word]" as a style tag and drops it: "citing [path:line]" was shown as
    # "citing , or say it cannot" in `ask -h` and in the command list
    checked = 0
    for words, command in _commands():
        if not words or not command.help:
            continue
        # as written, but for the backslash that keeps Rich from reading "[path:line]" as a tag
        first = " ".join(command.help.strip().splitlines()[0].replace("\\[", "[").split())
        shown = " ".join(runner.invoke(app, [*words, "-h"], terminal_width=400).stdout.split())
        assert first in shown, (words, first)
        checked += 1
    assert checked > 20
