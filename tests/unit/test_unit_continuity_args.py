"""The continuity verbs' arguments (continuity.md §1-§5): the bodies built, and usage errors."""

from __future__ import annotations

import re

import pytest

from hippoctl.args import command as args
from hippoctl.args.argcheck import UsageError
from hippoctl.protocol import messages as m


def _body(argv: list[str]) -> m.Body:
    return args.build_body(args.build_parser(argv).parse_args(argv))


def test_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPPO_SESSION_ID", raising=False)
    assert _body(["snapshot", "save", "--task", "t", "--summary", "s"]) == m.SnapshotSave(
        task="t", summary="s"
    )
    assert _body(["snapshot", "clear"]) == m.SnapshotClear(status="cleared")
    assert _body(["session", "show", "--task", "t"]) == m.SessionShow(task="t", limit=8)
    assert _body(["session", "resume"]) == m.SessionResume()
    assert _body(["handoff", "show", "#7"]) == m.HandoffShow(id=7)
    assert _body(["current", "show"]) == m.CurrentShow()
    assert _body(["wm", "push", "--content", "c", "--importance", "0"]) == m.WmPush(
        content="c", importance=0.0
    )
    assert _body(["wm", "flush", "--session", "a"]) == m.WmFlush(scope="default", session="a")
    created = _body(["handoff", "create", "--summary", "s", "--artifact", "x"])
    assert isinstance(created, m.HandoffCreate) and created.artifacts == ["x"]
    assert re.fullmatch(r"fallback-\d+-\d+", created.session_id)
    monkeypatch.setenv("HIPPO_SESSION_ID", "envs")
    assert _body(["session", "log", "--content", "c"]) == m.SessionLog(session_id="envs", content="c")
    created = _body(["handoff", "create", "--summary", "s"])
    assert isinstance(created, m.HandoffCreate) and created.session_id == "envs"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wm", "push", "--content", "c", "--importance", "1.01"], "--importance must be between 0 and 1"),
        (["wm", "push", "--content", "c", "--importance", "inf"], "--importance must be between 0 and 1"),
        (["wm", "push"], "wm push needs --content"),
        (["wm", "clear", "--importance", "0.3"], "--importance does not go with `wm clear`"),
        (["wm", "read", "--scope", " "], "--scope is empty"),
        (["handoff", "latest", "--summary", "s"], "--summary does not go with `handoff latest`"),
        (["handoff", "show"], "handoff show needs a handoff number"),
        (["handoff", "show", "²"], "must be a number"),
        (["handoff", "show", str(2**64)], "must be a number"),
        (["session", "latest", "--limit", "3"], "--limit does not go with `session latest`"),
        (["snapshot", "save", "--task", "t"], "snapshot save needs --summary"),
    ],
)
def test_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        _body(argv)
