"""`import --chatgpt`: ChatGPT's data export (conversations.json, or its zip) and memory lists.

The fixture tests/fixtures/chatgpt/conversations.json is an export in the real shape: a hidden
system message and custom instructions, an edited user message and a regenerated answer (branches
off the kept one), a screenshot and a voice message (object parts), a tool run, pasted code, a
secret, a chat marked "don't remember" and an unanswered, untitled one.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from hippod.ingest import chatgpt
from hippod.ingest.chatgpt import Conversation, FormatMismatch, branch, said
from hippod.ingest.chunking import Chunk, FormatError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chatgpt" / "conversations.json"

# What the user said on the kept branches, through capture's heuristics, in export order.
EXPECTED = [
    ("preference", "We're using GitHub Actions with a self-hosted runner for the billing service"),
    ("rule", "Never deploy on Fridays, the on-call rotation is too thin"),
    ("decision", "keep the Terraform state in the S3 backend with DynamoDB locking"),
    ("rule", "always freeze time in the payments suite"),
    ("preference", "Avoid pinning freezegun below 1.4 in the test requirements, the old one leaks"),
    ("preference", "prefer pytest over unittest for any new test file"),
    ("spec", "export invoices as CSV from the admin page"),
    ("spec", "email a monthly summary to each account owner"),
    ("rule", "run the migrations before the app container starts"),
    ("rule", "run the migrations before the app container starts"),  # the unanswered chat says it again
]


def _not_text(raw: bytes) -> str:
    return raw.decode()


def _parse(data: bytes) -> chatgpt.ChatGPTFile:
    return chatgpt.parse(data, _not_text)


def texts(chunks: list[Chunk] | None) -> list[str]:
    return [c.text for c in chunks or []]


def _conversation(mapping: dict[str, Any], current: str | None) -> Conversation:
    doc = {"title": "t", "mapping": mapping, "current_node": current}
    found = _parse(json.dumps([doc]).encode())
    assert found.conversations is not None
    return found.conversations[0]


def _node(text: str | None, parent: str | None, children: list[str], role: str = "user") -> dict[str, Any]:
    message = None
    if text is not None:
        message = {"author": {"role": role}, "content": {"content_type": "text", "parts": [text]}}
    return {"message": message, "parent": parent, "children": children}


def test_the_fixture_yields_what_the_user_said_on_the_kept_branches() -> None:
    found = _parse(FIXTURE.read_bytes())
    assert found.conversations is not None and len(found.conversations) == 6
    extracted = chatgpt.extract_conversations(found.conversations)
    assert [(c.tags[0], c.text) for c in extracted.chunks] == EXPECTED
    assert (extracted.secrets, extracted.not_remembered) == (1, 1)
    every = " ".join(c.text for c in extracted.chunks)
    # Assistant and tool text, the custom instructions, the abandoned edit, pasted code's comments
    # and the "don't remember" chat are not the user's statements.
    for absent in (
        "pin third-party",
        "wall time",
        "emoji",
        "Terraform Cloud",
        "time.time",
        "staging password",
    ):
        assert absent not in every


def test_the_branch_follows_current_node_past_edits_and_regenerations() -> None:
    mapping = {
        "root": _node(None, None, ["u1"]),
        "u1": _node("first question", "root", ["a1", "a1b"]),
        "a1": _node("first answer", "u1", [], role="assistant"),
        "a1b": _node("regenerated answer", "u1", ["u2old", "u2"], role="assistant"),
        "u2old": _node("the question before the edit", "a1b", []),
        "u2": _node("the edited question", "a1b", []),
    }
    kept = [m.content.parts for m in branch(_conversation(mapping, "u2")) if m.content]
    assert [bytes(p[0]) for p in kept if p] == [
        b'"first question"',
        b'"regenerated answer"',
        b'"the edited question"',
    ]
    # Without a usable current_node: the newest child (the last) at each step.
    for current in (None, "gone"):
        last = [said(m) for m in branch(_conversation(mapping, current))]
        assert last == ["first question", None, "the edited question"]


def test_a_cycle_in_the_tree_ends_the_walk() -> None:
    mapping = {"a": _node("one message here", "b", ["b"]), "b": _node("another message", "a", ["a"])}
    assert [said(m) for m in branch(_conversation(mapping, "a"))] == ["another message", "one message here"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["hi there"]}},
            "hi there",
        ),
        ({"author": {"role": "assistant"}, "content": {"content_type": "text", "parts": ["no"]}}, None),
        ({"author": {"role": "system"}, "content": {"content_type": "text", "parts": ["no"]}}, None),
        ({"author": {"role": "tool"}, "content": {"content_type": "text", "parts": ["no"]}}, None),
        (
            {
                "author": {"role": "user"},
                "content": {"content_type": "text", "parts": ["hidden"]},
                "metadata": {"is_visually_hidden_from_conversation": True},
            },
            None,
        ),
        ({"author": {"role": "user"}, "content": {"content_type": "user_editable_context"}}, None),
        (
            {
                "author": {"role": "user"},
                "content": {
                    "content_type": "multimodal_text",
                    "parts": [
                        {"content_type": "image_asset_pointer", "asset_pointer": "x"},
                        7,
                        "caption",
                        None,
                    ],
                },
            },
            "caption",
        ),
        (
            {
                "author": {"role": "user"},
                "content": {
                    "content_type": "multimodal_text",
                    "parts": [{"content_type": "audio_transcription", "text": "spoken words"}],
                },
            },
            "spoken words",
        ),
        ({"author": {"role": "user"}, "content": {"content_type": "text", "parts": None}}, None),
        ({"author": None, "content": None}, None),
    ],
)
def test_said_takes_only_what_the_user_typed_or_spoke(message: dict[str, Any], expected: str | None) -> None:
    conversation = _conversation({"n": {"message": message, "parent": None, "children": []}}, "n")
    assert [said(m) for m in branch(conversation)] == [expected]


def test_conversations_under_a_key_one_conversation_and_an_empty_export() -> None:
    one = {"mapping": {"n": _node("Never push to main on a Friday", None, [])}, "current_node": "n"}
    for doc in ({"conversations": [one]}, one):
        found = _parse(json.dumps(doc).encode())
        assert found.conversations is not None and len(found.conversations) == 1
    empty = _parse(b"[]")
    assert (empty.conversations, empty.memories) == (None, [])


def test_a_conversation_out_of_shape_is_named() -> None:
    doc = [{"mapping": {}}, {"mapping": {"n": {"message": {"author": {"role": 3}}}}}]
    with pytest.raises(FormatError, match=r"conversation 2 is not in the export's shape"):
        _parse(json.dumps(doc).encode())


def test_the_export_zip_is_read_for_its_conversations_json(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("chat.html", "<html></html>")
        archive.writestr("export/conversations.json", FIXTURE.read_bytes())
    found = _parse(buffer.getvalue())
    assert found.conversations is not None and len(found.conversations) == 6
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("user.json", "{}")
    with pytest.raises(FormatError, match=r"holds no conversations\.json"):
        _parse(buffer.getvalue())
    with pytest.raises(FormatError, match="not a readable zip archive"):
        _parse(b"PK\x03\x04 torn")


# --- memory lists --------------------------------------------------------------------------------


def test_memories_object_strings_and_objects() -> None:
    doc = {"memories": ["Prefers dark mode", {"content": "Lives in Lyon"}, {"text": "Uses vim"}, {"x": 1}, 7]}
    found = _parse(json.dumps(doc).encode())
    assert texts(found.memories) == ["Prefers dark mode", "Lives in Lyon", "Uses vim"]
    assert found.passed_over == 2


def test_top_level_array_prefers_content_over_text() -> None:
    found = _parse(json.dumps([{"content": "kept", "text": "not this"}, "plain"]).encode())
    assert texts(found.memories) == ["kept", "plain"]


def test_a_list_with_no_text_at_all_is_refused() -> None:
    with pytest.raises(FormatError, match="no item of the list holds text"):
        _parse(b'[1, 2, {"x": 3}]')


def test_plain_text_is_one_memory_per_line_without_markers() -> None:
    text = "- first memory\n\n* second memory\n• third memory\n  fourth memory  \n-not a marker"
    found = _parse(text.encode())
    assert found.from_text
    assert texts(found.memories) == [
        "first memory",
        "second memory",
        "third memory",
        "fourth memory",
        "-not a marker",
    ]


def test_text_starting_with_a_bracket_that_is_not_json_is_lines() -> None:
    assert texts(_parse(b"[note] use pnpm\nsecond line").memories) == ["[note] use pnpm", "second line"]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("# Project notes\n- a bullet under it\n", 1, "a markdown heading"),
        ("first memory line\n  ## Deploys\n", 2, "a markdown heading"),
        ("a memory line\n```sh\nmake test\n```\n", 2, "a markdown code fence"),
        ("| col | col |\n", 1, "a markdown table row"),
    ],
)
def test_markdown_is_refused_pointing_at_markdown(text: str, line: int, what: str) -> None:
    with pytest.raises(FormatMismatch, match=f"line {line} is {what}") as caught:
        _parse(text.encode())
    assert caught.value.flag == "markdown"


def test_json_of_another_shape_is_refused() -> None:
    with pytest.raises(FormatError, match=r"expected ChatGPT's conversations\.json"):
        _parse(b'{"chats": []}')
    with pytest.raises(FormatError, match="to be a JSON array"):
        _parse(b'{"memories": {"a": 1}}')
    with pytest.raises(FormatError, match="nested too deeply"):
        _parse(b"[" * 100_000 + b"]" * 100_000)


def test_a_torn_json_file_is_refused_not_read_as_lines() -> None:
    torn = FIXTURE.read_bytes()[:5000]
    with pytest.raises(FormatError, match="not valid JSON"):
        chatgpt.parse(torn, _not_text, json_file=True)
    with pytest.raises(FormatError, match="not valid JSON"):
        chatgpt.parse(b"- a list, not JSON\n", _not_text, json_file=True)
    assert chatgpt.parse(b"[note] use pnpm\n", _not_text).from_text
