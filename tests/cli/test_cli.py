"""The CLI contract on the bundled example vault: through Typer's runner and as a process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork.cli.main import app

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"
runner = CliRunner()


def run(db: Path, *args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["--db", str(db), *args])
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "vault"
    shutil.copytree(VAULT, dest)
    return dest


@pytest.fixture
def db(tmp_path: Path, vault: Path) -> Path:
    path = tmp_path / "s.db"
    code, out = run(path, "ingest", str(vault), "--json")
    assert code == 0, out
    return path


def test_ingest_json_report_shape(tmp_path: Path, vault: Path) -> None:
    code, out = run(tmp_path / "x.db", "ingest", str(vault), "--json")
    report = json.loads(out)
    assert code == 0
    assert set(report) >= {"added", "updated", "deleted", "unchanged", "errors"}
    assert report["added"] == len(list(vault.rglob("*.md")))
    assert report["errors"] == []
    code, out = run(tmp_path / "x.db", "ingest", str(vault), "--json")
    again = json.loads(out)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, report["added"])


def test_ingest_says_which_notes_it_read_again_under_other_rules(
        db: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_CHUNK_TOKENS", "60")  # another chunk size: other rules
    code, out = run(db, "stats", "--json")
    n = len(list(vault.rglob("*.md")))
    assert json.loads(out)["to_reread"] == n
    code, out = run(db, "ingest", str(vault), "--dry-run", "--json")
    assert (json.loads(out)["reread"], json.loads(out)["unchanged"]) == (n, 0)
    code, out = run(db, "ingest", str(vault))
    assert code == 0 and f"reread {n}" in out and "read again" in out
    code, out = run(db, "ingest", str(vault), "--json")
    assert (json.loads(out)["reread"], json.loads(out)["unchanged"]) == (0, n)


def test_context_json_contract(db: Path) -> None:
    code, out = run(db, "context", "traefik", "--json", "--max-entities", "5", "--depth", "1")
    assert code == 0, out
    ctx = json.loads(out)
    assert ctx["query"] == "traefik"
    assert 0 < len(ctx["entities"]) <= 5
    top = ctx["entities"][0]
    assert top["label"] == "Traefik" and top["relevance"] == "Direct"
    assert set(top) >= {"iri", "label", "types", "relevance", "score", "facts"}
    assert "service" in top["types"]
    for f in top["facts"]:
        assert set(f) >= {"predicate", "value", "value_type", "confidence", "trust",
                          "recorded_at", "retracted_at", "source"}
        assert f["value_type"] in ("Entity", "Literal")
        if f["value_type"] == "Entity":
            assert f["value_label"]
        assert set(f["source"]) == {"path", "line_start", "line_end", "chunk_id",
                                    "supporting_text"}
    runs_on = [f for f in top["facts"] if f["predicate"] == "runs_on"]
    assert runs_on and runs_on[0]["value_label"] == "kota"
    assert set(ctx["summary"]) >= {"total_entities", "total_facts", "direct_hits",
                                   "linked_additions", "tokens", "truncated"}


def test_every_citation_resolves_to_the_file_text(db: Path, vault: Path) -> None:
    code, out = run(db, "context", "traefik", "--json", "--max-tokens", "0")
    ctx = json.loads(out)
    checked = 0
    for e in ctx["entities"]:
        for f in e["facts"] + e.get("incoming", []):
            src = f["source"]
            lines = (vault / src["path"]).read_text(encoding="utf-8").splitlines()
            span = " ".join(lines[src["line_start"] - 1: src["line_end"]])
            quote = src["supporting_text"].rstrip("…")
            assert " ".join(quote.split()) in " ".join(span.split()), (src, span)
            checked += 1
    for ev in ctx["evidence"]:
        lines = (vault / ev["path"]).read_text(encoding="utf-8").splitlines()
        assert ev["text"] == "\n".join(lines[ev["line_start"] - 1: ev["line_end"]])
    assert checked > 20


def test_linked_expansion_and_depth_zero(db: Path) -> None:
    # room past the twenty entities the words name themselves (the feature spec's tasks
    # among them) for what only a link reaches
    args = ("--json", "--max-tokens", "0", "--max-entities", "40")
    _, out = run(db, "context", "Kestrel Queue", *args)
    ctx = json.loads(out)
    assert any(e["relevance"] == "Linked" for e in ctx["entities"])
    assert ctx["summary"]["linked_additions"] >= 1
    _, out = run(db, "context", "Kestrel Queue", *args, "--depth", "0")
    assert json.loads(out)["summary"]["linked_additions"] == 0


def test_max_tokens_is_respected_and_counted(db: Path) -> None:
    from knotwork.retrieve import count_tokens

    for fmt in ([], ["--json"]):
        _, out = run(db, "context", "traefik", "--max-tokens", "400", *fmt)
        text = out.rstrip("\n")
        assert count_tokens(text) <= 400
        if fmt:
            ctx = json.loads(text)
            assert ctx["summary"]["tokens"] == count_tokens(text)
            assert ctx["summary"]["truncated"] is True


def test_facts_history_shows_retracted_after_edit(db: Path, vault: Path) -> None:
    note = vault / "services" / "Traefik.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("port: 443", "port: 8443"), encoding="utf-8")
    code, out = run(db, "ingest", str(vault), "--json")
    assert json.loads(out)["updated"] == 1
    _, live = run(db, "facts", "Traefik", "--json")
    ports = [f["value"] for f in json.loads(live) if f["predicate"] == "port"]
    assert ports == ["8443"]
    _, hist = run(db, "facts", "Traefik", "--json", "--history")
    old = [f for f in json.loads(hist) if f["predicate"] == "port" and f["value"] == "443"]
    assert old and old[0]["retracted_at"] is not None
    assert old[0]["retract_reason"] == "source edited"  # and why
    assert all("retract_reason" not in f for f in json.loads(live))
    _, text_hist = run(db, "facts", "Traefik", "--history")
    assert "(source edited)" in next(line for line in text_hist.splitlines() if "= 443" in line)


def test_delete_and_rename_apply_exactly(db: Path, vault: Path) -> None:
    (vault / "services" / "Old Nginx Proxy.md").unlink()
    (vault / "hosts" / "vega.md").rename(vault / "hosts" / "vega-renamed.md")
    _, out = run(db, "ingest", str(vault), "--json")
    report = json.loads(out)
    assert report["deleted"] == 1 and report["renamed"] == 1 and report["added"] == 0
    code, _ = run(db, "facts", "hosts/vega-renamed", "--json")
    assert code == 0


def test_entity_search_stats(db: Path) -> None:
    code, out = run(db, "entity", "traefik proxy", "--json")
    assert code == 0 and json.loads(out)["label"] == "Traefik"
    code, out = run(db, "search", "reverse proxy", "--json", "--k", "3")
    got = json.loads(out)
    assert got["query"] == "reverse proxy"  # the shape REST and MCP answer with
    hits = got["hits"]
    assert code == 0 and 0 < len(hits) <= 3 and {"path", "line_start", "heading"} <= set(hits[0])
    code, out = run(db, "stats", "--json")
    assert code == 0 and json.loads(out)["documents"] == 20


def test_unknown_entity_fails_with_one_line(db: Path) -> None:
    res = runner.invoke(app, ["--db", str(db), "facts", "No Such Thing"])
    assert res.exit_code == 3
    assert "no entity named 'No Such Thing'" in res.stderr


def test_bad_files_are_reported_and_the_rest_ingested(tmp_path: Path, vault: Path) -> None:
    (vault / "bad.md").write_bytes(b"---\ntitle: [unclosed\n---\nBody links [[kota]].\n")
    (vault / "binary.md").write_bytes(b"\x00\x01\x02PNG")
    (vault / "latin1.md").write_bytes(b"caf\xe9 au lait\n")
    code, out = run(tmp_path / "y.db", "ingest", str(vault), "--json")
    report = json.loads(out)
    assert code == 0
    reasons = {e["path"]: e for e in report["errors"]}
    assert "malformed YAML" in reasons["bad.md"]["reason"] and reasons["bad.md"]["line"]
    assert "binary" in reasons["binary.md"]["reason"]
    assert "UTF-8" in reasons["latin1.md"]["reason"] and reasons["latin1.md"]["line"] == 1
    assert report["added"] == 21  # the 20 notes and bad.md (its body still counts)
    _, facts = run(tmp_path / "y.db", "facts", "bad", "--json")
    assert any(f["predicate"] == "links_to" for f in json.loads(facts))


def test_real_subprocess_and_exit_code(tmp_path: Path, vault: Path) -> None:
    exe = [sys.executable, "-c", "from knotwork.cli.main import main; main()"]
    db = str(tmp_path / "p.db")
    res = subprocess.run([*exe, "--db", db, "ingest", str(vault), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["added"] == 20
    res = subprocess.run([*exe, "--db", db, "context", "traefik"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("# Context: traefik")
    res = subprocess.run([*exe, "--db", db, "ingest", str(tmp_path / "missing")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "not a folder" in res.stderr


def test_reading_commands_refuse_a_store_that_is_not_there(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "store.db"
    for args in (["context", "traefik"], ["search", "traefik"], ["facts", "Traefik"],
                 ["entity", "Traefik"], ["stats", "--json"], ["reindex", "--embeddings"]):
        res = runner.invoke(app, ["--db", str(missing), *args])
        assert res.exit_code == 3, (args, res.stdout)
        assert f"no store at {missing}" in res.stderr
        assert res.stderr.count("\n") == 1  # one line, however long the path
    assert not missing.parent.exists()  # nothing was created on the way


def test_max_entities_must_be_positive(db: Path) -> None:
    res = runner.invoke(app, ["--db", str(db), "context", "traefik", "--max-entities", "0"])
    assert res.exit_code == 2
    assert "max_entities must be a positive integer" in res.stderr


def test_ingest_one_note_of_the_vault(db: Path, vault: Path) -> None:
    note = vault / "services" / "Grafana.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nGrafana runs on [[vega]].\n",
                    encoding="utf-8")
    code, out = run(db, "ingest", str(note), "--json")
    assert code == 0, out
    report = json.loads(out)
    assert (report["updated"], report["unchanged"], report["added"]) == (1, 0, 0)
    res = runner.invoke(app, ["--db", str(db), "ingest", str(VAULT / "index.md")])
    assert res.exit_code == 2 and "not inside the vault of scope 'default'" in res.stderr


def test_human_output_prints_vault_text_as_it_is(tmp_path: Path) -> None:
    # Rich reads `[name]` as a style tag: `[[kota]]` lost its `kota`, and a folder named
    # like a closing tag crashed the command with a traceback instead of printing it
    vault = tmp_path / "v"
    (vault / "[/draft]").mkdir(parents=True)
    (vault / "[/draft]" / "plan.md").write_text(
        "---\ntags: [x\n---\n# Plan [b]\n\nRuns on [[kota]] and [bold]not bold[/bold].\n",
        encoding="utf-8")
    db = tmp_path / "s.db"
    res = runner.invoke(app, ["--db", str(db), "ingest", str(vault)])
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith("[/draft]/plan.md:2: malformed YAML frontmatter")
    res = runner.invoke(app, ["--db", str(db), "search", "kota"])
    assert res.exit_code == 0, res.output
    assert "[/draft]/plan.md:4-6 (Plan [b])" in res.stdout
    assert "Runs on [[kota]] and [bold]not bold[/bold]." in res.stdout
    res = runner.invoke(app, ["--db", str(db), "facts", "Plan [b]"])
    assert res.exit_code == 0, res.output
    assert "runs_on = kota" in res.stdout and "[/draft]/plan.md:6" in res.stdout
    res = runner.invoke(app, ["--db", str(db), "entity", "Plan [b]"])
    assert res.exit_code == 0 and res.stdout.startswith("Plan [b]  kw:note/"), res.output
    missing = tmp_path / "[/x]" / "s.db"
    res = runner.invoke(app, ["--db", str(missing), "stats"])
    assert res.exit_code == 3 and f"no store at {missing}" in res.stderr


def test_every_option_and_command_says_what_it_does() -> None:
    """``--help`` is the CLI's manual: each command, argument and option explains itself in
    plain text (no docstring markup such as ``--x`` printed as is)."""
    import typer.main

    group = typer.main.get_command(app)
    assert isinstance(group, typer.main.TyperGroup)
    missing, markup = [], []
    for name, command in group.commands.items():
        texts = {f"{name}": command.help or ""}
        for param in command.params:
            texts[f"{name} {param.name}"] = getattr(param, "help", None) or ""
        missing += [where for where, text in texts.items() if not text.strip()]
        markup += [where for where, text in texts.items() if "``" in text]
    assert not missing, f"no help text: {missing}"
    assert not markup, f"reST markup in help text: {markup}"


def test_compact_gives_back_room_and_changes_no_answer(db: Path, vault: Path) -> None:
    note = vault / "services" / "Traefik.md"
    text = note.read_text(encoding="utf-8")
    for i in range(3):  # three saves: the chunks of two past versions are cited by nothing
        note.write_text(text + f"\nSaved {i} times.\n", encoding="utf-8")
        assert run(db, "ingest", str(vault), "--json")[0] == 0
    note.write_text(text.replace("port: 443", "port: 8443"), encoding="utf-8")
    assert run(db, "ingest", str(vault), "--json")[0] == 0  # a retracted fact cites its chunk
    asked = [("context", "traefik", "--json", "--max-tokens", "0"),
             ("facts", "Traefik", "--history", "--json"), ("search", "traefik", "--json")]
    before = [run(db, *args)[1] for args in asked]

    code, out = run(db, "compact", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert set(result) == {"chunks_removed", "versions_packed", "bytes_freed", "store_bytes"}
    assert result["chunks_removed"] > 0
    assert [run(db, *args)[1] for args in asked] == before
    code, out = run(db, "compact", "--vacuum")
    assert code == 0 and out.startswith("removed 0 chunks"), out


def test_version_and_short_help() -> None:
    from knotwork import __version__

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"knotwork {__version__}"
    res = runner.invoke(app, ["-h"])
    assert res.exit_code == 0 and "Usage" in res.stdout
    res = runner.invoke(app, ["context", "-h"])
    assert res.exit_code == 0 and "--max-tokens" in res.stdout
