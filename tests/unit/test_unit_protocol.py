"""The wire: framing, message round trips and error codes (daemon.md §6, §9)."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from typing import Any

import msgspec
import pytest

from hippoctl.protocol import errors, messages
from hippoctl.protocol.framing import MAX_FRAME, FrameError, check_length, pack, read_frame, recv_frame

# --- framing ------------------------------------------------------------------------------------------


def test_max_frame_is_16_mib() -> None:
    assert MAX_FRAME == 16 * 1024 * 1024


def test_pack_prefixes_big_endian_length() -> None:
    assert pack(b"abc") == b"\x00\x00\x00\x03abc"
    assert pack(b"x" * 258)[:4] == b"\x00\x00\x01\x02"


def test_pack_refuses_over_the_limit() -> None:
    assert pack(b"x" * 10, max_frame=10) == struct.pack(">I", 10) + b"x" * 10
    with pytest.raises(FrameError) as info:
        pack(b"x" * 11, max_frame=10)
    assert info.value.code == "frame_too_large"


def test_pack_refuses_over_16_mib_with_message() -> None:
    body = b"\0" * (MAX_FRAME + 1)
    with pytest.raises(FrameError) as info:
        pack(body)
    assert info.value.code == "frame_too_large"
    assert str(info.value) == f"request exceeds the 16 MiB frame limit ({MAX_FRAME + 1} bytes)"


def test_check_length() -> None:
    with pytest.raises(FrameError) as zero:
        check_length(0, 10)
    assert zero.value.code == "bad_frame"
    with pytest.raises(FrameError) as big:
        check_length(11, 10)
    assert big.value.code == "frame_too_large"
    check_length(1, 10)
    check_length(10, 10)


@pytest.fixture
def pair() -> Any:
    a, b = socket.socketpair()
    a.settimeout(5)
    b.settimeout(5)
    yield a, b
    a.close()
    b.close()


def test_socketpair_round_trip(pair: Any) -> None:
    a, b = pair
    a.sendall(pack(b"first") + pack(b"\x00second\xff"))
    assert recv_frame(b) == b"first"
    assert recv_frame(b) == b"\x00second\xff"
    a.close()
    assert recv_frame(b) is None


def test_socketpair_large_frame_arrives_whole(pair: Any) -> None:
    a, b = pair
    body = bytes(range(256)) * (3 * 4096 + 7)  # ~3 MiB, more than one recv
    sender = threading.Thread(target=a.sendall, args=(pack(body),))
    sender.start()
    try:
        assert recv_frame(b) == body
    finally:
        sender.join(5)


def test_recv_frame_none_on_clean_eof(pair: Any) -> None:
    a, b = pair
    a.shutdown(socket.SHUT_WR)
    assert recv_frame(b) is None


def test_recv_frame_eof_inside_frame_is_an_error(pair: Any) -> None:
    a, b = pair
    a.sendall(struct.pack(">I", 10) + b"only5")
    a.shutdown(socket.SHUT_WR)
    with pytest.raises(ConnectionError):
        recv_frame(b)


def test_recv_frame_eof_inside_header_is_an_error(pair: Any) -> None:
    a, b = pair
    a.sendall(b"\x00\x00")
    a.shutdown(socket.SHUT_WR)
    with pytest.raises(ConnectionError):
        recv_frame(b)


@pytest.mark.parametrize(("length", "code"), [(0, "bad_frame"), (11, "frame_too_large")])
def test_recv_frame_checks_length_before_reading(pair: Any, length: int, code: str) -> None:
    a, b = pair
    a.sendall(struct.pack(">I", length))  # no body follows: the check must not wait for one
    with pytest.raises(FrameError) as info:
        recv_frame(b, max_frame=10)
    assert info.value.code == code


async def test_read_frame_async() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(pack(b"one") + pack(b"two"))
    reader.feed_eof()
    assert await read_frame(reader) == b"one"
    assert await read_frame(reader) == b"two"
    assert await read_frame(reader) is None


async def test_read_frame_async_rejects_bad_lengths() -> None:
    for length, code in [(0, "bad_frame"), (MAX_FRAME + 1, "frame_too_large")]:
        reader = asyncio.StreamReader()
        reader.feed_data(struct.pack(">I", length))
        with pytest.raises(FrameError) as info:
            await read_frame(reader)
        assert info.value.code == code


async def test_read_frame_async_truncated_header() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b"\x00")
    reader.feed_eof()
    with pytest.raises(asyncio.IncompleteReadError):
        await read_frame(reader)


# --- messages ---------------------------------------------------------------------------------------


def _sample(t: Any, name: str, default: Any = msgspec.NODEFAULT) -> Any:
    """A value of msgspec type `t` that differs from the field's default."""
    mi = msgspec.inspect
    if isinstance(t, mi.BoolType):
        return not default if isinstance(default, bool) else True
    if isinstance(t, mi.IntType):
        return default + 7 if isinstance(default, int) else 7
    if isinstance(t, mi.FloatType):
        return 1.25 if default != 1.25 else 2.5
    if isinstance(t, mi.StrType):
        return f"value of {name} ✓"
    if isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return [_sample(t.item_type, name)]
    if isinstance(t, mi.DictType):
        return {"k": _sample(t.value_type, name)}
    if isinstance(t, mi.LiteralType):
        return next(v for v in t.values if v != default)
    if isinstance(t, mi.UnionType):
        non_none = [u for u in t.types if not isinstance(u, mi.NoneType)]
        return _sample(non_none[0], name)
    if isinstance(t, mi.StructType):
        return _build(t.cls)
    if isinstance(t, mi.AnyType):
        return {"any": [1, "two"]}
    raise AssertionError(f"no sample for {t!r} (field {name}); extend _sample")


def _struct_info(cls: type) -> msgspec.inspect.StructType:
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    return info


def _build(cls: type) -> Any:
    info = _struct_info(cls)
    kwargs = {f.name: _sample(f.type, f.name, f.default) for f in info.fields}
    return cls(**kwargs)


BODY_TYPES = messages.RequestBody.__args__


def test_body_tags_cover_every_body() -> None:
    assert {t.__name__ for t in BODY_TYPES} == messages.BODY_TAGS
    assert len(BODY_TYPES) >= 10


@pytest.mark.parametrize("body_type", BODY_TYPES, ids=lambda t: t.__name__)
def test_request_round_trip(body_type: type) -> None:
    body = _build(body_type)
    request = messages.Request(
        id=42,
        cwd="/srv/proj",
        body=body,
        env={"HIPPO_TENANT": "acme"},
        tenant="acme",
        session="sess-1",
        global_store=True,
        deadline_ms=1500,
    )
    wire = msgspec.msgpack.encode(request)
    decoded = msgspec.msgpack.Decoder(messages.ClientMessage).decode(wire)
    assert decoded == request
    assert type(decoded.body) is body_type
    raw = msgspec.msgpack.decode(wire)
    assert raw["t"] == "Request"
    assert raw["body"]["t"] == body_type.__name__


@pytest.mark.parametrize("body_type", BODY_TYPES, ids=lambda t: t.__name__)
def test_request_round_trip_with_defaults(body_type: type) -> None:
    required = {f.name: _sample(f.type, f.name) for f in _struct_info(body_type).fields if f.required}
    request = messages.Request(id=1, cwd="/", body=body_type(**required))
    decoded = msgspec.msgpack.decode(msgspec.msgpack.encode(request), type=messages.Request)
    assert decoded == request


@pytest.mark.parametrize(
    "message",
    [
        messages.Hello(protocol=1, client_version="0.1.0", pid=123, home="/h", features=["progress"]),
        messages.Cancel(id=5),
    ],
    ids=lambda m: type(m).__name__,
)
def test_client_messages_round_trip(message: Any) -> None:
    wire = msgspec.msgpack.encode(message)
    assert msgspec.msgpack.Decoder(messages.ClientMessage).decode(wire) == message
    assert msgspec.msgpack.decode(wire)["t"] == type(message).__name__


@pytest.mark.parametrize(
    "message",
    [
        messages.Welcome(
            protocol=1, daemon_version="0.1.0", pid=9, started_at="2026-01-01T00:00:00.000Z", home="/h"
        ),
        messages.Progress(id=3, line="working", stream="err"),
        messages.Result(
            id=3,
            exit_code=0,
            text="Remembered [mem_1]",
            data={"id": "mem_1", "n": [1, 2]},
            warnings=["careful"],
        ),
        messages.Error(
            id=None,
            code="not_found",
            message="no such memory",
            hint="try recall",
            details={"id": "mem_x"},
            exit_code=1,
        ),
    ],
    ids=lambda m: type(m).__name__,
)
def test_daemon_messages_round_trip(message: Any) -> None:
    wire = msgspec.msgpack.encode(message)
    assert msgspec.msgpack.Decoder(messages.DaemonMessage).decode(wire) == message


def test_decoders_ignore_unknown_fields() -> None:
    raw = {"t": "Hello", "protocol": 1, "client_version": "9.9", "pid": 1, "home": "", "future": {"x": 1}}
    decoded = msgspec.msgpack.Decoder(messages.ClientMessage).decode(msgspec.msgpack.encode(raw))
    assert decoded == messages.Hello(protocol=1, client_version="9.9", pid=1, home="")


def test_unknown_body_tag_is_rejected() -> None:
    raw = {"t": "Request", "id": 1, "cwd": "/", "body": {"t": "NoSuchVerb"}}
    with pytest.raises(msgspec.ValidationError):
        msgspec.msgpack.Decoder(messages.ClientMessage).decode(msgspec.msgpack.encode(raw))


def test_request_frame_round_trip_through_a_socket(pair: Any) -> None:
    a, b = pair
    request = messages.Request(id=7, cwd="/w", body=_build(messages.Recall))
    a.sendall(pack(msgspec.msgpack.encode(request)))
    frame = recv_frame(b)
    assert frame is not None
    assert msgspec.msgpack.Decoder(messages.ClientMessage).decode(frame) == request


# --- error codes --------------------------------------------------------------------------------------

EXIT_1 = [
    "not_found",
    "no_store",
    "foreign_store",
    "store_too_new",
    "rejected_value",
    "already_superseded",
    "raw_append_only",
    "ambiguous_prefix",
    "no_recent_recall",
    "run_mismatch",
    "bad_state",
    "file_too_large",
    "frame_too_large",
    "timeout",
    "cancelled",
    "connector_not_configured",
    "internal",
]
EXIT_4 = ["protocol_mismatch", "unsupported_request", "home_mismatch", "bad_frame"]


@pytest.mark.parametrize("code", EXIT_1)
def test_request_failures_exit_1(code: str) -> None:
    assert errors.exit_code_for(code) == 1 == errors.FAILED


@pytest.mark.parametrize("code", EXIT_4)
def test_mismatch_codes_exit_4(code: str) -> None:
    assert errors.exit_code_for(code) == 4 == errors.MISMATCH


def test_usage_and_unreachable() -> None:
    assert errors.exit_code_for("usage") == 2 == errors.USAGE
    assert errors.exit_code_for("shutting_down") == 3 == errors.UNREACHABLE
    assert errors.OK == 0
    assert errors.INTERRUPTED == 130


def test_hippo_error_exit_code_follows_the_table() -> None:
    from hippod.base.errors import HippoError

    assert HippoError("usage", "bad").exit_code == 2
    assert HippoError("bad_frame", "bad").exit_code == 4
    assert HippoError("foreign_store", "bad").exit_code == 1
