"""A sync tells an untouched file by its size and time, and reads every file it cannot."""

from __future__ import annotations

import os
import time
from pathlib import Path

from knotwork import Knotwork


def _same_size_edit(note: Path, old: str, new: str) -> None:
    """Rewrite ``note`` with text of the same length and give it back its time."""
    st = note.stat()
    text = note.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    note.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))


def _vault(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "v"
    vault.mkdir()
    note = vault / "kota.md"
    note.write_text("---\nos: alpine\n---\n# kota\n", encoding="utf-8")
    return vault, note


def _values(kw: Knotwork, label: str) -> set[str]:
    return {f.value for f in kw.facts(label)}


def test_a_file_saved_long_before_its_sync_is_trusted_by_size_and_time(tmp_path: Path) -> None:
    vault, note = _vault(tmp_path)
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(note, ns=(hour_ago, hour_ago))
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.ingest().added == 1
        _same_size_edit(note, "alpine", "debian")
        # size and time as written an hour before the sync that stored them: not read
        assert kw.ingest().unchanged == 1
        assert _values(kw, "kota") == {"alpine"}
        assert kw.ingest(force=True).updated == 1  # force reads every file
        assert _values(kw, "kota") == {"debian"}
        os.utime(note, ns=(hour_ago, hour_ago + 10**9))  # only its time moved: read, unchanged
        assert (kw.ingest().unchanged, _values(kw, "kota")) == (1, {"debian"})


def test_a_file_synced_right_after_its_save_is_read_again(tmp_path: Path) -> None:
    """Where the time alone cannot tell: a second save in the same clock step as the
    first (a 2 s step on FAT) leaves the time as it was."""
    vault, note = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.ingest().added == 1
        _same_size_edit(note, "alpine", "debian")
        assert kw.ingest().updated == 1
        assert _values(kw, "kota") == {"debian"}


def test_a_file_saved_again_unchanged_is_trusted_by_its_new_time_after_one_read(
        tmp_path: Path) -> None:
    """Its time moved (a save of the same text, a checkout back and forth): one sync reads
    it and records the time; from then on its time tells again."""
    vault, note = _vault(tmp_path)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        assert kw.ingest().added == 1
        hour_ago = time.time_ns() - 3600 * 10**9
        os.utime(note, ns=(hour_ago, hour_ago))  # the same text, another time
        assert kw.ingest().unchanged == 1  # read, found the same, its time recorded
        _same_size_edit(note, "alpine", "debian")
        assert kw.ingest().unchanged == 1  # trusted by that time now: not read
        assert _values(kw, "kota") == {"alpine"}
