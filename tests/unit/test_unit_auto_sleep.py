"""autoSleep's settings from a store's config.json (memory-model.md §4)."""

from __future__ import annotations

from hippod.jobs.auto_sleep import Settings, settings
from hippod.store.config import STORE_DEFAULTS


def test_the_spec_default_is_on_at_50() -> None:
    assert settings(STORE_DEFAULTS) == Settings(enabled=True, threshold=50)


def test_values_of_the_wrong_kind_fall_back_to_the_default() -> None:
    assert settings({"autoSleep": {"enabled": False}}) == Settings(enabled=False, threshold=50)
    assert settings({"autoSleep": False}).enabled is False
    assert settings({"autoSleep": {"threshold": 5}}) == Settings(enabled=True, threshold=5)
    for bad in (0, -3, "50", True, 2.5, None):
        assert settings({"autoSleep": {"threshold": bad}}).threshold == 50
    assert settings({"autoSleep": "yes"}) == Settings()
