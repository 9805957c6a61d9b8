"""Reading an import's file: the digest, and the refusal of a file that is not what its flag says."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hippod.base.errors import HippoError
from hippod.ingest import readers
from hippod.ingest.chatgpt import FormatMismatch
from hippod.ingest.chunking import FormatError
from hippod.ingest.export_doc import ParsedExport

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chatgpt" / "conversations.json"


def _read(tmp_path: Path, fmt: str, data: bytes, name: str = "input.txt") -> readers.Reading:
    path = tmp_path / name
    path.write_bytes(data)
    return readers.read(readers.load(fmt, str(path)))


def test_the_digest_is_of_the_bytes_and_of_a_rules_folder_s_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(b"- a rule worth keeping\n")
    assert (
        readers.load("markdown", str(path)).digest == hashlib.sha256(b"- a rule worth keeping\n").hexdigest()
    )
    rules = tmp_path / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "a.mdc").write_text("---\nalwaysApply: true\n---\n- Prefer tabs for indentation\n")
    first = readers.load("cursor", str(rules)).digest
    (rules / "b.md").write_text("- Every bug fix gets a test\n")
    assert readers.load("cursor", str(rules)).digest != first


@pytest.mark.parametrize("fmt", ["claude", "markdown", "file", "chatgpt", "cursor"])
def test_binary_files_are_not_text(tmp_path: Path, fmt: str) -> None:
    with pytest.raises(HippoError, match=r"not text \(control byte 0x01 at offset 12\)"):
        _read(tmp_path, fmt, b"looks fine: \x01\x02 and more text here\n")
    with pytest.raises(HippoError, match="it is a zip archive, not text"):
        _read(tmp_path, fmt if fmt != "chatgpt" else "markdown", b"PK\x03\x04rest of a zip")
    with pytest.raises(HippoError, match="not UTF-8 text"):
        _read(tmp_path, fmt, b"caf\xe9 au lait\n")


@pytest.mark.parametrize("at", [0, 15, 16, 17, 40])
def test_a_control_byte_is_found_in_any_window(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    # The search goes a window at a time: a byte on either side of a window's edge, or the last one.
    monkeypatch.setattr(readers, "_WINDOW", 16)
    for text in ("é" * at + "\x07" + "plain text, " * 4, "é" * at + "\x07"):
        with pytest.raises(HippoError, match=rf"control byte 0x07 at offset {2 * at}\)"):
            readers.text_of("notes.md", text.encode())
    assert readers.text_of("notes.md", ("é" * at + "plain").encode()) == "é" * at + "plain"


@pytest.mark.parametrize("fmt", ["claude", "markdown", "file", "cursor"])
def test_text_that_yields_nothing_says_why(tmp_path: Path, fmt: str) -> None:
    assert _read(tmp_path, fmt, b"").empty == "the file is empty"
    assert _read(tmp_path, fmt, b"  \n\n").empty == "the file is empty"
    short = _read(tmp_path, fmt, b"- tiny\n- also\n")
    assert short.empty == "it holds no text to import (every piece is under 10 characters)"
    block = b"<!-- hippo:start -->\n- hippoctl context --auto\n<!-- hippo:end -->\n"
    assert _read(tmp_path, fmt, block).empty == "it holds nothing but hippo's own instruction block"


def test_claude_json_is_a_memory_list_and_an_empty_one_is_no_error(tmp_path: Path) -> None:
    reading = _read(tmp_path, "claude", json.dumps({"memories": ["from json memory"]}).encode(), "m.json")
    assert [c.text for c in reading.content] == ["from json memory"]  # type: ignore[union-attr]
    assert reading.empty is None
    assert _read(tmp_path, "claude", b"[]", "memory.json").empty is None
    with pytest.raises(FormatError, match=r"expected a memory list"):
        _read(tmp_path, "claude", b'{"foo": 1}', "g.json")
    with pytest.raises(FormatError, match="not valid JSON"):
        _read(tmp_path, "claude", b'{"a":', "torn.json")
    # A torn JSON file under another name is a CLAUDE.md like any other text.
    assert _read(tmp_path, "claude", b'{"a": still a line of text', "CLAUDE.md").empty is not None


def test_claude_refuses_chatgpt_s_export_naming_the_flag(tmp_path: Path) -> None:
    with pytest.raises(FormatMismatch, match="ChatGPT's conversation export") as caught:
        _read(tmp_path, "claude", FIXTURE.read_bytes(), "conversations.json")
    assert caught.value.flag == "chatgpt"


def test_chatgpt_readings(tmp_path: Path) -> None:
    export = _read(tmp_path, "chatgpt", FIXTURE.read_bytes(), "conversations.json")
    assert export.conversations == 6 and export.empty is None and len(export.content) == 10
    assert export.warnings == [
        "1 item looked like a secret: not stored",
        '1 conversation marked "don\'t remember": passed over',
    ]
    lines = _read(tmp_path, "chatgpt", b"short\nnope\n")
    assert lines.empty == "it holds no line of 10 characters or more"
    assert _read(tmp_path, "chatgpt", b'{"memories": ["tiny"]}').empty is None
    with pytest.raises(FormatError, match="the file is empty"):
        _read(tmp_path, "chatgpt", b" \n")


def test_json_export_empty_file_and_empty_export(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="the file is empty"):
        _read(tmp_path, "json", b"\n")
    reading = _read(tmp_path, "json", b'{"hippod_version": "0.1.0", "memories": []}')
    assert isinstance(reading.content, ParsedExport) and reading.content.records == []
