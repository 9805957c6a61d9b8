"""Parsing the `Memories for hippo` section and a transcript's compaction summary (ingest.md §8)."""

from __future__ import annotations

import json

from hippod.ingest.compaction_items import memory_items, newest_compact_summary, read_tail


def test_items_under_a_heading_end_at_the_next_heading() -> None:
    text = (
        "Intro\n## Memories for hippo\n- first item\n* second item\n• third\n1. fourth\n## Next\n- not this"
    )
    assert memory_items(text) == ["first item", "second item", "third", "fourth"]


def test_a_bold_line_opens_and_prose_after_a_blank_line_closes() -> None:
    text = "**Memories for Hippo:**\n\n- one\n  continued here\n- two\n\nSome closing prose.\n- stray"
    assert memory_items(text) == ["one continued here", "two"]


def test_no_section_means_no_items_and_the_phrase_in_prose_is_not_a_heading() -> None:
    assert memory_items("We talked about memories for hippo today.\n- not an item") == []
    assert memory_items("") == []


def test_the_last_section_wins() -> None:
    text = "# Memories for hippo\n- old\n# Other\n# Memories for hippo\n- new"
    assert memory_items(text) == ["new"]


def test_the_newest_compact_summary_is_found_in_string_or_block_content() -> None:
    lines = [
        {"type": "user", "isCompactSummary": True, "message": {"content": "first"}},
        {"type": "user", "message": {"content": "isCompactSummary mentioned in text"}},
        {
            "type": "user",
            "isCompactSummary": True,
            "message": {"content": [{"type": "text", "text": "second"}]},
        },
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode() + b"\n{torn"
    assert newest_compact_summary(data) == "second"
    assert newest_compact_summary(b"") is None


def test_read_tail_drops_the_torn_first_line(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path), "t.jsonl")
    path.write_bytes(b"aaaa\nbbbb\ncccc\n")
    assert read_tail(str(path), 7) == b"cccc\n"
    assert read_tail(str(path), 100) == b"aaaa\nbbbb\ncccc\n"
