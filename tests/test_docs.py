"""The README documents every setting and every CLI command."""

from __future__ import annotations

from pathlib import Path

from knotwork import SETTINGS
from knotwork.cli.main import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented() -> None:
    missing = [s.name for s in SETTINGS if f"| `{s.name}` |" not in README]
    assert not missing, f"README lacks settings: {missing}"


def test_every_command_is_documented() -> None:
    names = [c.name or (c.callback.__name__ if c.callback else "") for c in
             app.registered_commands]
    missing = [n for n in names if f"knotwork {n}" not in README]
    assert not missing, f"README lacks commands: {missing}"
