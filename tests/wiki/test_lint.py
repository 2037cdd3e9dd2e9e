"""Lint finds exactly the problems planted in a vault, none in a clean one, and a page
whose cited fact is retracted goes stale until the source says it again."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from knotwork import Knotwork
from knotwork.cli.main import app

from .conftest import fact_id, write


def _page(kw: Knotwork, cites: list[int]) -> str:
    body = "# Incident Summary\n\nThe incident touched [[Alpha]].\n\n" + "".join(
        f"- claim kw:fact/{i}\n" for i in cites)
    return kw.write_page("summary", "Incident Summary", body, summary="What happened")


def _kinds(kw: Knotwork) -> list[tuple[str, str]]:
    return sorted((f.kind, f.path) for f in kw.lint())


def test_a_clean_vault_has_no_findings(kw: Knotwork) -> None:
    _page(kw, [fact_id(kw, "Gamma", "port")])
    assert kw.lint() == []


def test_one_planted_problem_of_each_kind_gives_exactly_those_findings(
        kw: Knotwork, vault: Path) -> None:
    write(vault, {
        "Beta.md": "# Beta\n\nBeta links to [[Alpha]], [[Gamma]], [[Delta]] and [[Nowhere]]."
                   "\nIt waits for [[Ghost]].\n",
        "Alpha.md": "---\nstatus: active\n---\n# Alpha\n\nAlpha links to [[Beta]] and"
                    " [[Gamma]]; see [[Incident Summary]]. [[Ghost]] is coming.\n",
        "Gamma.md": "---\nport: 443\n---\n# Gamma\n\nGamma links to [[Alpha]], [[Beta]]"
                    " and [[Ghost]].\n",
        "Delta.md": "---\naliases: [Gamma]\n---\n# Delta\n\nDelta links to [[Beta]].\n",
        "Lonely.md": "# Lonely\n\nLonely links to [[Alpha]].\n",
        "Island.md": "# Island\n\nNo links here.\n",
    })
    kw.ingest()
    port = fact_id(kw, "Gamma", "port")
    weak = kw.assert_fact("Beta", "version", "2.0", confidence=0.4).id
    contra = kw.assert_fact("Alpha", "status", "retired").id
    _page(kw, [port, weak])
    (vault / "Gamma.md").write_text("---\nport: 8443\n---\n# Gamma\n\nGamma links to"
                                    " [[Alpha]], [[Beta]] and [[Ghost]].\n")
    kw.ingest()
    found = kw.lint()
    assert sorted((f.kind, f.path, f.line) for f in found) == [
        ("broken_link", "Beta.md", 3),
        ("contradiction", "Alpha.md", 2),
        ("duplicate_entity", "Delta.md", 2),
        ("isolated_page", "Island.md", 1),
        ("low_confidence", "wiki/summary/incident-summary.md", 11),
        ("missing_page", "Alpha.md", 6),
        ("orphan_page", "Lonely.md", 1),
        ("stale_claim", "wiki/summary/incident-summary.md", 10),
    ]
    by = {f.kind: f for f in found}
    assert by["broken_link"].subject == "Nowhere"
    assert by["missing_page"].subject == "Ghost" and len(by["missing_page"].facts) == 3
    assert by["contradiction"].subject == "Alpha" and contra in by["contradiction"].facts
    assert port in by["stale_claim"].facts and "8443" in by["stale_claim"].fix
    assert by["low_confidence"].facts == (weak,)
    assert all(f.fix and f.message for f in found)
    assert found[0]["kind"] == found[0].kind and found[0]["facts"] == list(found[0].facts)


def test_a_retracted_citation_is_stale_until_the_source_says_it_again(
        kw: Knotwork, vault: Path) -> None:
    _page(kw, [fact_id(kw, "Gamma", "port")])
    gamma = (vault / "Gamma.md").read_text()
    (vault / "Gamma.md").write_text(gamma.replace("443", "8443"))
    kw.ingest()
    [stale] = kw.lint()
    assert (stale.kind, stale.severity) == ("stale_claim", "error")
    (vault / "Gamma.md").write_text(gamma)  # fixed: the source states it again
    kw.ingest()
    assert kw.lint() == []
    # and citing the current fact (the page rewritten) is clean too
    (vault / "Gamma.md").write_text(gamma.replace("443", "8443"))
    kw.ingest()
    _page(kw, [fact_id(kw, "Gamma", "port")])
    assert kw.lint() == []


def test_a_page_written_before_a_newer_statement_is_stale(kw: Knotwork) -> None:
    _page(kw, [fact_id(kw, "Gamma", "port")])
    newer = kw.assert_fact("Gamma", "port", "9000").id
    [stale] = [f for f in kw.lint() if f.kind == "stale_claim"]
    assert stale.severity == "warning" and newer in stale.facts


def test_two_records_claiming_to_supersede_one_are_a_contradiction(
        kw: Knotwork, vault: Path) -> None:
    write(vault, {
        "ADR-0002.md": "# ADR-0002\n\nOld decision. See [[ADR-0003]], [[ADR-0004]].\n",
        "ADR-0003.md": "---\nsupersedes: \"[[ADR-0002]]\"\n---\n# ADR-0003\n\nNew one.\n",
        "ADR-0004.md": "# ADR-0004\n\nAnother one, which only cites [[ADR-0002]].\n",
    })
    kw.ingest()
    assert not [f for f in kw.lint() if f.kind == "contradiction"]
    (vault / "ADR-0004.md").write_text("---\nsupersedes: \"[[ADR-0002]]\"\n---\n# ADR-0004\n")
    kw.ingest()
    [found] = [f for f in kw.lint() if f.kind == "contradiction"]
    rival = fact_id(kw, "ADR-0004", "supersedes")
    # each claim is stated both ways (ADR-0003 supersedes ADR-0002, ADR-0002 superseded_by
    # ADR-0003): two claims, four facts
    assert found.subject == "ADR-0002" and rival in found.facts and len(found.facts) == 4
    assert (found.path, found.line) == ("ADR-0003.md", 2)
    assert "ADR-0003, ADR-0004" in found.message
    # "superseded_by" read the other way round: one more claimant, still one finding
    write(vault, {"ADR-0002.md": "---\nsuperseded_by: \"[[Beta]]\"\n---\n# ADR-0002\n\n"
                                 "Old decision. See [[ADR-0003]], [[ADR-0004]].\n"})
    kw.ingest()
    [found] = [f for f in kw.lint() if f.kind == "contradiction"]
    assert len(found.facts) == 6 and "Beta" in found.message


def test_values_in_windows_that_do_not_overlap_agree(kw: Knotwork) -> None:
    kw.assert_fact("Beta", "owner", "Dana", valid_to="2025-01-01")
    kw.assert_fact("Beta", "owner", "Marco", valid_from="2025-01-01")
    assert kw.lint() == [] or all(f.kind != "contradiction" for f in kw.lint())
    kw.assert_fact("Beta", "owner", "Lena", valid_from="2024-06-01", valid_to="2025-06-01")
    [found] = [f for f in kw.lint() if f.kind == "contradiction"]
    assert "Lena" in found.message


def test_cli_json_exit_code_and_fix(kw: Knotwork, vault: Path, tmp_path: Path) -> None:
    _page(kw, [fact_id(kw, "Gamma", "port")])
    kw.write_page("topic", "Scratch", "# Scratch\n\nAbout [[Alpha]].\n")
    (vault / "wiki/topic/scratch.md").unlink()
    kw.ingest()
    db = str(tmp_path / "kw.db")
    run = CliRunner().invoke(app, ["--db", db, "lint", "--vault", str(vault), "--json"])
    assert run.exit_code == 1, run.output
    out = json.loads(run.output)
    [f] = out["findings"]
    assert set(f) >= {"kind", "severity", "path", "line", "message", "subject", "facts", "fix"}
    assert (f["kind"], f["path"]) == ("broken_link", "wiki/index.md") and f["fixable"]
    # without --vault: the folder the store last synced is the vault
    run = CliRunner().invoke(app, ["--db", db, "lint", "--json"])
    assert run.exit_code == 1 and json.loads(run.output) == out
    run = CliRunner().invoke(app, ["--db", db, "lint", "--vault", str(vault), "--fix"])
    assert run.exit_code == 0, run.output
    assert "scratch" not in (vault / "wiki/index.md").read_text()
    assert "incident-summary" in (vault / "wiki/index.md").read_text()
    assert "fixed: rewrote wiki/index.md: 2 lines before, 1 after" in run.output
    again = CliRunner().invoke(app, ["--db", db, "lint", "--vault", str(vault), "--fix"])
    assert again.exit_code == 0 and "fixed" not in again.output  # nothing left to do
    assert [e.action for e in kw.get_log(None)].count("fix-index") == 1


def test_a_frontmatter_cites_list_is_watched_too(kw: Knotwork, vault: Path) -> None:
    port = fact_id(kw, "Gamma", "port")
    kw.write_page("topic", "Ports", f"---\ncites: [{port}]\n---\n# Ports\n\nOn [[Alpha]].\n")
    kw.ingest()
    assert kw.lint(kinds=["stale_claim"]) == []
    (vault / "Gamma.md").write_text((vault / "Gamma.md").read_text().replace("443", "80"))
    kw.ingest()
    [stale] = kw.lint(kinds=["stale_claim", "low_confidence"])
    # knotwork wrote the frontmatter again (a title added): the list is block style now
    assert (stale.kind, stale.path, stale.line) == ("stale_claim", "wiki/topic/ports.md", 4)


def test_an_embedded_attachment_of_the_vault_is_no_broken_link(kw: Knotwork, vault: Path
                                                               ) -> None:
    write(vault, {"Beta.md": "# Beta\n\nBeta links to [[Alpha]] and [[Gamma]].\n"
                             "![[diagram.png]] ![[img/Photo.JPG]]\n"})
    (vault / "img").mkdir()
    (vault / "img/photo.jpg").write_bytes(b"\xff\xd8")  # names compare case-folded
    (vault / "diagram.png").write_bytes(b"\x89PNG")
    _page(kw, [fact_id(kw, "Gamma", "port")])
    kw.ingest()
    assert kw.lint(kinds=["broken_link"]) == []
    (vault / "diagram.png").unlink()
    [broken] = kw.lint(kinds=["broken_link"])
    assert (broken.subject, broken.path, broken.line) == ("diagram.png", "Beta.md", 4)
