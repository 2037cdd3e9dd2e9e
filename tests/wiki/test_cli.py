"""``knotwork wiki write|list|show|search|log`` through Typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from knotwork.cli.main import app


def test_write_then_list_show_search_and_log(vault: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    page = tmp_path / "page.md"
    page.write_text("# Outage\n\nThe [[Alpha]] certificates expired.\n")
    r = CliRunner()
    base = ["--db", db, "wiki"]
    done = r.invoke(app, [*base, "write", "summary", "Outage 7", "-f", str(page),
                          "--summary", "Certs expired", "--vault", str(vault), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["path"] == "wiki/summary/outage-7.md"
    listed = r.invoke(app, [*base, "list", "--vault", str(vault), "--json"])
    assert [p["title"] for p in json.loads(listed.output)] == ["Outage 7"]
    shown = r.invoke(app, [*base, "show", "summary", "Outage 7", "--vault", str(vault)])
    assert "certificates expired" in shown.output
    found = r.invoke(app, [*base, "search", "certificates", "--vault", str(vault), "--json"])
    assert json.loads(found.output)[0]["path"] == "wiki/summary/outage-7.md"
    log = r.invoke(app, [*base, "log", "--vault", str(vault)])
    assert "create" in log.output and "wiki/summary/outage-7.md" in log.output
    bad = r.invoke(app, [*base, "write", "summary", "x\x00y", "--vault", str(vault)],
                   input="body")
    assert bad.exit_code == 2 and "NUL" in bad.output
    missing = r.invoke(app, [*base, "show", "topic", "Nope", "--vault", str(vault)])
    assert missing.exit_code == 3
