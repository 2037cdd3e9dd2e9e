"""The ``patterns`` setting decides which files of a vault are notes, for every sync."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork, Settings
from knotwork.errors import ConfigError, NotFound


def _vault(root: Path) -> Path:
    (root / "log").mkdir(parents=True)
    (root / "kota.md").write_text("# kota\n\nA home server.\n", encoding="utf-8")
    (root / "log" / "nov.txt").write_text("# November\n\nMoved [[kota]].\n", encoding="utf-8")
    (root / "log" / "NOV.TXT.bak").write_text("an editor's backup\n", encoding="utf-8")
    return root


def _paths(kw: Knotwork) -> set[str]:
    return set(kw.store.reader.document_index(kw.settings.scope))


def test_the_setting_picks_the_notes_and_a_narrower_one_deletes_the_rest(tmp_path: Path
                                                                         ) -> None:
    vault, db = _vault(tmp_path / "v"), str(tmp_path / "s.db")
    env = {"KNOTWORK_PATTERNS": "**/*.md, log/*.txt"}
    with Knotwork.open(vault, db=db, settings=Settings.from_env(env=env, embedder="none")
                       ) as kw:
        assert kw.patterns() == ("**/*.md", "log/*.txt")
        assert kw.ingest().added == 2
        assert _paths(kw) == {"kota.md", "log/nov.txt"}
        assert [f.value_label for f in kw.facts("November") if f.predicate == "links_to"] \
            == ["kota"]
        # an explicit list wins over the setting, for this sync only
        report = kw.ingest(patterns=["**/*.md"])
        assert (report.deleted, _paths(kw)) == (1, {"kota.md"})
        with pytest.raises(NotFound, match="deleted note"):  # its facts went with it
            kw.facts("November")
        assert {f.retract_reason for f in kw.facts("November", history=True)} \
            == {"source deleted"}
        assert kw.ingest().added == 1  # the setting again


@pytest.mark.parametrize("patterns", ["", " , ,"])
def test_no_pattern_at_all_is_refused_before_anything_is_read(tmp_path: Path,
                                                              patterns: str) -> None:
    vault = _vault(tmp_path / "v")
    with pytest.raises(ConfigError, match="no file patterns"):
        Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none", patterns=patterns)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        with pytest.raises(ConfigError, match="no file patterns"):
            kw.ingest(patterns=[" ", ""])
        assert kw.stats()["documents"] == 0


@pytest.mark.parametrize("glob", ["../*.md", "/etc/*", "notes/../../*.md", "C:/vault/*.md",
                                  "..\\*.md", "notes/", "j/"])
def test_a_glob_that_can_match_no_vault_path_is_refused_and_deletes_nothing(
        tmp_path: Path, glob: str) -> None:
    vault = _vault(tmp_path / "v")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.ingest().added == 1
        with pytest.raises(ConfigError, match="can never match a note"):
            kw.ingest(patterns=[glob])  # it found no note, so it would delete every one
        assert _paths(kw) == {"kota.md"}
    with pytest.raises(ConfigError, match="can never match a note"):
        Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none", patterns=glob)
    # a name with a colon or dots is a name like any other
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.patterns(["10:00 *.md", "a..b/*.md"]) == ("10:00 *.md", "a..b/*.md")
