"""Reading a JSON export a record at a time (ingest/export_doc.py `_decode`): whatever the
document, the same value as one decode of the whole, or the same error."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from hippod.ingest import export_doc

RECORD = b'{"content": "deploys go through the queue", "tags": ["ops"], "schema_fit": 0.5}'
DOCUMENTS = [
    b'{"hippod_version": "1.0", "store": "global", "memories": [' + b", ".join([RECORD] * 50) + b"]}",
    b"[" + b", ".join([RECORD] * 3) + b"]",  # the original hippo's bare array
    b'{"memories": []}',
    b"[]",
    b'{"hippod_version": "1.0"}',  # no memories
    b'{"memories": {"content": "an object, not an array"}}',
    b'{"memories": [1, "two", null, [3]]}',
    b'{"memories": [{"content": "x"}], "memories": [{"content": "the last one counts"}]}',
    b'"just a string"',
    b"42",
    b'[{"a": tru}]',  # malformed inside a record
    b'{"memories": [{"content": "x", "tags": [1,]}]}',
    b'[{"content": "x"}] trailing',
    b'{"memories": [1, 2',
    b'[{"content": 1e999}]',  # a number out of range inside a record
    b'[{"content": "caf\xe9"}]',  # not UTF-8 inside a record
    b'[{"content": "\\ud800"}]',
    b"[" * 5000 + b"]" * 5000,
    # A key given twice: the value it replaces must still be valid JSON text.
    b'{"a": "caf\xe9", "a": 1, "memories": []}',
    b'{"a": 1e999, "a": 1}',
    b'{"memories": [1e999], "memories": []}',
    b'{"store": "s", "store": "t", "memories": [{"content": "x"}]}',
    b'{"memories": [{"content": "x"}], "store": "after the records"}',
]


def _outcome(decode: Any, data: bytes) -> tuple[str, Any]:
    try:
        # Encoded again: the keys' order counts too.
        return "value", msgspec.json.encode(decode(data))
    except (msgspec.DecodeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("data", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_a_document_decodes_as_one_decode_of_the_whole(data: bytes) -> None:
    assert _outcome(export_doc._decode, data) == _outcome(msgspec.json.decode, data)


def test_an_export_s_records_are_decoded_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    decode = msgspec.json.decode

    def counted(data: Any, **kwargs: Any) -> Any:
        sizes.append(len(data))
        return decode(data, **kwargs)

    monkeypatch.setattr(export_doc.msgspec.json, "decode", counted)
    value = export_doc._decode(DOCUMENTS[0])
    assert len(value["memories"]) == 50
    # The whole document is read once as raw parts, then the memories array; each record alone.
    assert sizes[0] == len(DOCUMENTS[0])
    assert max(sizes[1:]) <= len(b"[" + b", ".join([RECORD] * 50) + b"]")
    assert sum(1 for size in sizes if size == len(RECORD)) == 50
