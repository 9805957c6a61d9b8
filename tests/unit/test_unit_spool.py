"""The spool's file names and format (ingest.md §8), the hook budget, and rebuilding a request."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import msgspec
import platformdirs
import pytest

from hippoctl import hook
from hippoctl.protocol import messages as m
from hippoctl.protocol import spool
from hippoctl.protocol.errors import DAEMON_OUTDATED
from hippod.base.config import load_daemon_config
from hippod.base.errors import HippoError
from hippod.ingest.spool_requests import NotReplayable, request_for, session_end_document
from hippod.jobs.spool_replay import SpoolReplayer, tries_so_far
from hippod.store.roots import global_root

NAME = re.compile(r"^(\d{8}T\d{9})-(\d+)-([0-9a-f]{4})\.json$")


def document(**fields: object) -> spool.SpoolFile:
    base: dict[str, object] = {
        "v": 1,
        "kind": "capture-error",
        "created_at": "2026-10-01T18:22:33Z",
        "cwd": "/home/u/p",
        "env": {"HIPPO_SESSION_ID": "s1", "HIPPO_TENANT": "team"},
        "argv": ["capture-error"],
        "stdin": {"tool_name": "Bash", "error": "boom"},
    }
    base.update(fields)
    return msgspec.convert(base, spool.SpoolFile)


def test_name_format_and_order() -> None:
    moment = datetime(2026, 10, 1, 18, 22, 33, 45_000, tzinfo=UTC).timestamp()
    name = spool.new_name(moment, pid=4242)
    match = NAME.match(name)
    assert match, name
    assert match.group(1) == "20261001T182233045"
    assert match.group(2) == "4242"
    assert spool.key_of(name) == name[:-5]
    later = spool.new_name(moment + 0.001, pid=1)
    earlier = spool.new_name(moment - 60, pid=99999)
    assert sorted([later, name, earlier]) == [earlier, name, later]
    # Four random hex digits keep two names of one process in one millisecond apart.
    assert len({spool.new_name(moment, pid=1) for _ in range(50)}) > 1


def test_write_is_atomic_private_and_in_the_kind_folder(tmp_path: Path) -> None:
    name = spool.new_name()
    path = spool.write(str(tmp_path), name, document())
    assert path == str(tmp_path / "spool" / "capture-error" / name)
    for folder in (tmp_path / "spool", tmp_path / "spool" / "capture-error"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(tmp_path / "spool" / "capture-error") == [name]  # no temp file left behind
    data = json.loads(Path(path).read_text())
    assert list(data) == ["v", "kind", "created_at", "cwd", "env", "argv", "stdin"]
    assert data["v"] == 1 and data["kind"] == "capture-error"
    assert data["stdin"] == {"tool_name": "Bash", "error": "boom"}
    assert spool.read(path) == document()
    assert spool.count(str(tmp_path / "spool")) == (1, 0)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not a spool file"),
        (b'{"v": 1, "kind": "capture-error"}', "not a spool file"),
        (b'{"v": 2, "kind": "x", "created_at": "", "cwd": "/", "env": {}, "argv": []}', "v2 is not known"),
    ],
)
def test_read_names_the_problem(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=problem):
        spool.read(str(path))


@pytest.mark.skipif(sys.platform == "win32", reason="XDG rules")
def test_client_global_root_matches_the_daemons(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HIPPO_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert spool.global_root() == global_root()
    assert spool.global_root() == os.path.realpath(platformdirs.user_data_dir("hippo", appauthor=False))
    monkeypatch.setenv("XDG_DATA_HOME", "")
    assert spool.global_root() == global_root()
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "h"))
    assert spool.global_root() == global_root() == os.path.realpath(tmp_path / "h")


def test_budget_per_verb_and_override() -> None:
    assert hook.budget_seconds("capture-error", {}) == 4.0
    assert hook.budget_seconds("session-end", {}) == 4.0
    assert hook.budget_seconds("pre-compact", {}) == 25.0
    assert hook.budget_seconds("post-compact", {}) == 25.0
    assert hook.budget_seconds("compact-resume", {}) == 8.0
    assert hook.budget_seconds("capture-error", {"HIPPO_HOOK_TIMEOUT_MS": "750"}) == 0.75
    assert hook.budget_seconds("pre-compact", {"HIPPO_HOOK_TIMEOUT_MS": "750"}) == 0.75
    for bad in ("", "abc", "0", "-5", "inf", "nan"):
        assert hook.budget_seconds("capture-error", {"HIPPO_HOOK_TIMEOUT_MS": bad}) == 4.0


def test_payload_decoding() -> None:
    assert hook.decode_payload(None) is None
    assert hook.decode_payload(b"") is None
    assert hook.decode_payload(b'{"a": [1]}') == {"a": [1]}
    assert hook.decode_payload(b"not json") == "not json"
    with pytest.raises(hook.BadPayload, match=r"^the input is not valid UTF-8 \(byte 0xff at offset 9\)$"):
        hook.decode_payload(b"not json \xff")
    with pytest.raises(hook.BadPayload, match=r"the escape \\ud800, a lone surrogate"):
        hook.decode_payload(b'{"tool_name": "Bash", "error": ["x", {"y": "\\ud800"}]}')
    # A surrogate pair is one character, and fine.
    assert hook.decode_payload(b'{"e": "\\ud83d\\ude00"}') == {"e": "\U0001f600"}


def test_spoolable_kinds() -> None:
    assert set(spool.KINDS) == {"session-end", "capture-error", "pre-compact", "post-compact"}


def test_request_rebuilt_from_a_spool_file() -> None:
    request = request_for(document(argv=["--global", "capture-error"]), "capture-error", "k1")
    assert isinstance(request.body, m.CaptureError)
    assert request.body.payload == {"tool_name": "Bash", "error": "boom"}
    assert request.body.spool_key == "k1"
    assert request.cwd == "/home/u/p"
    assert request.global_store is True
    assert (request.tenant, request.session) == ("team", "s1")
    assert request_for(document(), "capture-error", "k1").global_store is False
    # Only the per-request variables travel.
    assert request_for(document(env={"PATH": "/bin"}), "capture-error", "k").env == {}


def test_a_spooled_session_end_keeps_its_flags() -> None:
    argv = ["session-end", "--once", "--codex-offset", "12"]
    body = request_for(document(kind="session-end", argv=argv), "session-end", "k").body
    assert isinstance(body, m.SessionEnd) and (body.once, body.codex_offset) == (True, 12)
    body = request_for(document(kind="session-end", argv=["session-end"]), "session-end", "k").body
    assert isinstance(body, m.SessionEnd) and body.once is False


def test_a_session_end_written_down_replays_as_the_same_request() -> None:
    body = m.SessionEnd(
        payload={"session_id": "s9", "cwd": "/home/u/p"}, spool_key="k", codex_offset=7, once=True
    )
    env = {"HIPPO_SCOPE": "review", "PATH": "/bin"}
    sent = m.Request(
        id=3, cwd="/home/u/p", body=body, env=env, tenant="team", session="s1", global_store=True
    )
    document = session_end_document(sent, body)
    assert document.kind == "session-end" and document.stdin == body.payload
    assert document.env == {"HIPPO_SCOPE": "review", "HIPPO_TENANT": "team", "HIPPO_SESSION_ID": "s1"}
    again = request_for(
        msgspec.json.decode(msgspec.json.encode(document), type=spool.SpoolFile), "session-end", "k"
    )
    assert again.body == body
    assert (again.cwd, again.tenant, again.session, again.global_store) == ("/home/u/p", "team", "s1", True)
    assert again.env == document.env
    plain = m.SessionEnd(payload=None, spool_key="k")
    assert (
        request_for(
            session_end_document(m.Request(id=1, cwd="/p", body=plain), plain), "session-end", "k"
        ).body
        == plain
    )


@pytest.mark.parametrize(
    ("doc", "folder", "problem"),
    [
        (document(kind="telepathy"), "telepathy", "unknown kind 'telepathy'"),
        (document(), "session-end", "does not match its folder"),
        (document(cwd="relative/dir"), "capture-error", "not an absolute path"),
    ],
)
def test_request_refused(doc: spool.SpoolFile, folder: str, problem: str) -> None:
    with pytest.raises(NotReplayable, match=problem):
        request_for(doc, folder, "k")


def test_tries_are_counted_from_the_err_note(tmp_path: Path) -> None:
    err = tmp_path / "a.err"
    assert tries_so_far(str(err)) == 0
    err.write_text("2026-10-01T00:00:00.000Z try 1 of 3: no store\n2026-10-01T00:05:00.000Z try 2 of 3: x\n")
    assert tries_so_far(str(err)) == 2


def test_a_hook_whose_daemon_cannot_be_started_spools_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HIPPO_SOCKET", str(tmp_path / "no.sock"))

    def cannot_spawn() -> None:
        raise FileNotFoundError(2, "No such file or directory", "/gone/python")

    monkeypatch.setattr("hippoctl.spawn.spawn_daemon", cannot_spawn)
    body = m.CaptureError()
    request = m.Request(id=1, cwd=str(tmp_path), body=body)
    assert hook.run("capture-error", request, spawn=True, strict=False, argv=["capture-error"]) == 0
    [name] = spool.json_names(os.path.join(spool.spool_root(), "capture-error"))
    assert body.spool_key == spool.key_of(name)


def test_unusable_watch_settings_fall_back_to_the_defaults(tmp_path: Path) -> None:
    # The spool replayer and the agent-note watcher both read these; a daemon must still start.
    (tmp_path / "daemon.json").write_text(json.dumps({"watch": {"debounceMs": "fast", "rescanSeconds": 0}}))
    loaded = load_daemon_config(str(tmp_path))
    config, warnings = loaded.values, loaded.warnings
    assert config["watch"] == {"enabled": True, "debounceMs": 1600, "rescanSeconds": 60}
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "watch.debounceMs must be a number >= 0; using the default",
        "watch.rescanSeconds must be a number >= 0.1; using the default",
    ]


def test_a_replay_an_outdated_daemon_refuses_waits_for_the_restart_without_a_try(tmp_path: Path) -> None:
    # A daemon whose installed code changed under it cannot load the verb's handler: the file is
    # kept for the restarted daemon, its tries untouched; any other refusal is a try.
    path = spool.write(str(tmp_path), spool.new_name(), document())
    err = path[: -len(spool.SUFFIX)] + spool.ERR_SUFFIX
    refusals = iter([DAEMON_OUTDATED, "bad_config"])

    async def refuse(ctx: object) -> object:
        raise HippoError(next(refusals), "refused")

    state = SimpleNamespace(hook_jobs=SimpleNamespace(holds=lambda key: False))
    kind_folder, name = os.path.split(path)
    root, folder = os.path.split(kind_folder)
    replayer = SpoolReplayer(state, refuse, watch=False, root=root)  # type: ignore[arg-type]
    assert asyncio.run(replayer.replay_file(folder, name)) is False
    assert os.path.exists(path) and tries_so_far(err) == 0
    assert asyncio.run(replayer.replay_file(folder, name)) is False
    assert os.path.exists(path) and tries_so_far(err) == 1


@pytest.mark.parametrize(("code", "spooled"), [(DAEMON_OUTDATED, 1), ("bad_input", 0)])
def test_a_hook_an_outdated_daemon_refuses_is_spooled_for_its_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, spooled: int
) -> None:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("hippoctl.hook.call", lambda *a, **k: m.Error(id=1, code=code, message="refused"))
    request = m.Request(id=1, cwd=str(tmp_path), body=m.CaptureError())
    assert hook.run("capture-error", request, spawn=False, strict=False, argv=["capture-error"]) == 0
    assert len(spool.json_names(os.path.join(spool.spool_root(), "capture-error"))) == spooled
