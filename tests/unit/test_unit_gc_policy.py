"""The daemon's garbage-collector settings (hippod/daemon/gc_policy.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hippod.daemon import gc_policy


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """Put the collector back as the test process had it."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_tune_freezes_what_exists_and_raises_only_the_young_threshold(restored_gc: None) -> None:
    _, older, oldest = gc.get_threshold()
    gc_policy.tune()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD, older, oldest)


def test_a_request_s_worth_of_short_lived_objects_runs_no_collection(restored_gc: None) -> None:
    gc_policy.tune()
    before = [s["collections"] for s in gc.get_stats()]
    for _ in range(50):
        # About what one recall holds at once: a record, a list and a dict per candidate.
        held = [({"a": 1.0}, [str(i)], [i]) for i in range(1_000)]
        del held
    assert [s["collections"] for s in gc.get_stats()] == before
