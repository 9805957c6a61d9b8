"""Reading a planning process's pickled result in the daemon (hippod/base/child.py): the same
objects as pickle.loads, taken a page at a time so that other threads get the GIL in between."""

from __future__ import annotations

import gc
import pickle
from dataclasses import dataclass
from typing import Any

import pytest

from hippod.base import child


@dataclass(frozen=True)
class _Row:
    id: str
    strength: float
    tags: tuple[str, ...]


def _plan_like(count: int) -> dict[str, Any]:
    rows = [_Row(f"m-{i}", i / 7, ("a", f"t{i % 13}")) for i in range(count)]
    return {
        "rows": rows,
        "pairs": [(i, i + 1, 0.75) for i in range(count)],
        "text": "x" * 300_000 + "\n" + "é" * 1000,  # longer than a page, with a newline inside
        "blob": bytes(range(256)) * 1000,
        "shared": [rows[0], rows[0]],  # the same object twice: the memo must hold
    }


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_the_same_objects_as_pickle_loads(protocol: int) -> None:
    data = pickle.dumps(_plan_like(20_000), protocol=protocol)
    got = child.unpickle(data)
    assert got == pickle.loads(data)
    assert got["shared"][0] is got["shared"][1]


def test_a_large_pickle_is_read_a_page_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    class Counted(child.Pages):
        def peek(self, size: int = 0) -> bytes:
            calls.append(size)
            return super().peek(size)

    monkeypatch.setattr(child, "Pages", Counted)
    data = pickle.dumps(_plan_like(50_000), protocol=pickle.HIGHEST_PROTOCOL)
    assert child.unpickle(data) == pickle.loads(data)
    # Every call is a point where the interpreter may switch threads: at least one a page.
    assert len(calls) >= len(data) // (128 * 1024)


def test_the_collector_is_back_as_it_was() -> None:
    data = pickle.dumps([1, 2, 3])
    assert gc.isenabled()
    assert child.unpickle(data) == [1, 2, 3]
    assert gc.isenabled()
    gc.disable()
    try:
        child.unpickle(data)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_a_truncated_pickle_raises_as_pickle_loads_does(protocol: int) -> None:
    data = pickle.dumps(_plan_like(100), protocol=protocol)
    cuts = [len(data) // 3, len(data) - 1]  # inside the long text, one byte short
    if protocol >= 3:  # bytes are bytes from protocol 3 on, read into a buffer
        blob = data.find(bytes(range(256)))
        assert blob >= 0
        cuts.append(blob + 1000)
    for cut in cuts:
        with pytest.raises((EOFError, pickle.UnpicklingError)) as expected:
            pickle.loads(data[:cut])
        with pytest.raises(expected.type):
            child.unpickle(data[:cut])
