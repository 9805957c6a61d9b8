"""Re-read accounting over a crafted transcript (continuity.md §7)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hippod.continuity.reread import rereads, session_calls
from hippod.store.records import SentBlock


def _at(minute: int) -> str:
    return f"2026-03-10T12:{minute:02d}:00.000Z"


def _assistant(message_id: str, minute: int, sidechain: bool = False) -> dict[str, object]:
    return {
        "type": "assistant",
        "isSidechain": sidechain,
        "timestamp": _at(minute),
        "message": {"id": message_id, "role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    }


def transcript() -> bytes:
    records = [
        {"type": "user", "isSidechain": False, "timestamp": _at(0), "message": {"content": "go"}},
        _assistant("msg_1", 1),
        _assistant("msg_1", 2),  # the same call streamed in two entries
        _assistant("msg_2", 3),
        _assistant("msg_sub", 4, sidechain=True),  # a sub-agent's call
        _assistant("msg_3", 5),
        {"type": "system", "subtype": "compact_boundary", "timestamp": _at(6)},
        _assistant("msg_4", 7),
        _assistant("msg_5", 8),
    ]
    return "\n".join(json.dumps(r) for r in records).encode()


def when(minute: int, second: int = 30) -> datetime:
    return datetime(2026, 3, 10, 12, minute, second, tzinfo=UTC)


def test_calls_are_distinct_main_chain_message_ids_and_boundaries_are_found() -> None:
    calls = session_calls(transcript())
    assert calls.calls == [when(m, 0) for m in (1, 3, 5, 7, 8)]
    assert calls.boundaries == [when(6, 0)]


def test_rereads_count_calls_after_the_send_before_the_next_boundary_minus_the_first() -> None:
    calls = session_calls(transcript())
    sent = [
        SentBlock("prompt_hook", when(0), 100),  # calls 1, 3, 5 -> 2 re-reads
        SentBlock("prompt_hook", when(4), 40),  # call 5 only -> 0
        SentBlock("compact_resume", when(6), 30),  # calls 7, 8 -> 1
    ]
    found = rereads(calls, sent)
    assert [(r.surface, r.tokens, r.calls, r.last) for r in found] == [
        ("compact_resume", 30, 1, when(8, 0)),
        ("prompt_hook", 200, 2, when(5, 0)),
    ]


def test_nothing_after_the_send_means_no_rereads() -> None:
    assert rereads(session_calls(transcript()), [SentBlock("prompt_hook", when(9), 50)]) == []
