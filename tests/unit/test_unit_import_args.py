"""`import`'s arguments: the path made absolute, --force carried, and what --agents refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippoctl.args import command as args
from hippoctl.args.argcheck import UsageError
from hippoctl.protocol import messages as m


def _body(argv: list[str]) -> m.Body:
    return args.build_body(args.build_parser(argv).parse_args(argv))


def test_force_goes_with_the_request(tmp_path: Path) -> None:
    body = _body(["-C", str(tmp_path), "import", "--chatgpt", "conversations.json", "--force"])
    assert body == m.Import(format="chatgpt", path=str(tmp_path / "conversations.json"), force=True)
    assert _body(["import", "--markdown", "/x/notes.md"]) == m.Import(format="markdown", path="/x/notes.md")


@pytest.mark.parametrize(("extra", "flag"), [(["--force"], "--force"), (["--tag", "t"], "--tag")])
def test_agents_refuses_what_only_a_file_takes(extra: list[str], flag: str) -> None:
    with pytest.raises(UsageError, match=f"{flag} does not apply to import --agents"):
        _body(["import", "--agents", *extra])
