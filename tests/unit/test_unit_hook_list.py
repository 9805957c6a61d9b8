"""`hook list`'s text: a header row over columns that line up, whatever the values' widths."""

from __future__ import annotations

from hippoctl.protocol.replies_hooks_install import HookFile, HookTarget
from hippod.handlers.hooks_install import list_text

ROWS = [
    HookTarget(
        target="claude-code",
        detected=True,
        state="installed",
        files=[
            HookFile(kind="block", path="/p/CLAUDE.md", state="absent", detail="no such file"),
            HookFile(kind="hooks", path="/h/settings.json", state="installed", detail="7 of 7 entries"),
        ],
    ),
    HookTarget(target="pi", detected=False, state="absent", files=[]),
    HookTarget(
        target="opencode",
        detected=False,
        state="outdated",
        files=[HookFile(kind="legacy-block", path="/p/AGENTS.md", state="outdated")],
    ),
]


def _starts(line: str) -> list[int]:
    """Where each space-separated field of a line starts."""
    return [i for i, c in enumerate(line) if c != " " and (i == 0 or line[i - 1] == " ")]


def test_the_table_has_a_header_row_and_aligned_columns() -> None:
    lines = list_text("/p", ROWS).splitlines()
    assert lines[0] == "Agent targets for /p:"
    header = lines[1]
    assert header.split() == ["TARGET", "DETECTED", "STATE", "FILE", "PATH"]
    columns = _starts(header)
    assert lines[2].split() == ["claude-code", "yes", "installed"]
    assert _starts(lines[2]) == columns[:3]
    # A file row leaves the target's columns empty and fills state, file and path under their headings.
    assert lines[3].split()[:3] == ["absent", "block", "/p/CLAUDE.md"]
    assert lines[3].endswith("/p/CLAUDE.md (no such file)")
    assert _starts(lines[3])[:3] == columns[2:5]
    assert _starts(lines[4])[:3] == columns[2:5]
    assert lines[5].split() == ["pi", "no", "absent"] and _starts(lines[5]) == columns[:3]
    # The widest file kind widens its column for every row, the header's too.
    assert _starts(lines[7])[:3] == columns[2:5]
    assert lines[7].split()[:2] == ["outdated", "legacy-block"]
    assert len(lines) == 8
