"""Each setting is declared once: SETTINGS is read from the Settings fields."""

from __future__ import annotations

from dataclasses import fields

import pytest

from knotwork import SETTINGS, ConfigError, Settings


def test_settings_lists_every_field_with_its_default_and_help() -> None:
    assert [s.name for s in SETTINGS] == [f.name for f in fields(Settings)]
    defaults = Settings()
    for s in SETTINGS:
        assert s.default == getattr(defaults, s.name)
        assert s.help.strip(), f"{s.name} has no help line"


def test_env_values_take_the_settings_type() -> None:
    s = Settings.from_env({"KNOTWORK_WORKERS": "3", "KNOTWORK_MIN_CONFIDENCE": "0.25",
                           "KNOTWORK_FUSION": "rrf"})
    assert (s.workers, s.min_confidence, s.fusion) == (3, 0.25, "rrf")
    with pytest.raises(ConfigError, match="KNOTWORK_WORKERS='many' is not a valid int"):
        Settings.from_env({"KNOTWORK_WORKERS": "many"})
