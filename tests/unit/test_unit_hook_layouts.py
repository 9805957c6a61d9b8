"""A user's settings.json and hooks.json keep their own layout through install and uninstall, and
backups stay out of the repository (integrations.md §3, §5, §8), against real files in a temp home."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hippod.integrations import claude, codex, files, hookjson, jsonedit

PREFIX = "/home/u/.venv/bin/hippoctl"
USER: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},
    "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "say done", "timeout": 3}]}]},
    "statusLine": {"type": "command", "command": "~/bin/status", "padding": 0},
}
HAND_MADE = """{
  "hooks": { "SessionEnd": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ] },
  "permissions": {"allow": ["Bash(ls)", "Read"],
                  "deny": []},
  "cleanupPeriodDays" : 30,
  "price": 1.50, "big": 1e3,

  "model": "opus"
}
"""
# Layouts found in the wild: (name, text, the indent new lines must use or None on one line).
LAYOUTS = [
    ("two-spaces", json.dumps(USER, indent=2) + "\n", "  "),
    ("four-spaces-no-newline", json.dumps(USER, indent=4), "    "),
    ("tabs", json.dumps(USER, indent="\t") + "\n", "\t"),
    ("compact", json.dumps(USER, separators=(",", ":")), None),
    ("one-line", json.dumps(USER) + "\n", None),
    ("crlf", json.dumps(USER, indent=2).replace("\n", "\r\n") + "\r\n", "  "),
    ("odd-key-order", json.dumps(dict(reversed(list(USER.items()))), indent=2) + "\n", "  "),
    ("unicode", json.dumps({"name": "Zoë 🦛 über", **USER}, indent=2, ensure_ascii=False) + "\n", "  "),
    ("escaped-unicode", json.dumps({"name": "Zoë 🦛", **USER}, indent=2) + "\n", "  "),
    ("hand-made", HAND_MADE, "  "),
    ("byte-order-mark", "\ufeff" + json.dumps(USER, indent=2) + "\n", "  "),
    ("empty", "{}\n", "  "),
    ("empty-with-space", "{ }", "  "),
    ("empty-hooks", '{\n  "model": "opus",\n  "hooks": {}\n}\n', "  "),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "home" / ".codex")}


def settings(env: dict[str, str], text: str | None = None) -> Path:
    path = Path(claude.settings_path(env))
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("keep_backup", [True, False], ids=["with-backup", "layout-only"])
@pytest.mark.parametrize(("name", "text", "indent"), LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_install_then_uninstall_gives_back_the_very_bytes(
    tmp_path: Path, env: dict[str, str], name: str, text: str, indent: str | None, keep_backup: bool
) -> None:
    root = str(tmp_path / "global")
    path = settings(env, text)
    claude.install(PREFIX, global_root=root, env=env)
    written = path.read_bytes().decode("utf-8")
    assert len(claude.status(PREFIX, env).present) == 7
    new_lines = [line for line in written.splitlines() if line not in text.splitlines()]
    if indent is None:
        assert "\n" not in written.strip()
    else:
        # What install added is laid out as the file is: whole steps of its indent, its line ending.
        for line in new_lines:
            lead = line[: len(line) - len(line.lstrip(" \t"))]
            assert lead == indent * (len(lead) // len(indent)), (name, line)
        assert ("\r\n" in written) == ("\r\n" in text)
    if not keep_backup:
        if name.startswith("empty"):
            # Without the backup, an object left empty cannot be told from one hippod created.
            return
        os.unlink(files.backup_path(str(path), root))  # uninstall must then rely on the layout alone
    claude.uninstall(global_root=root, env=env)
    assert path.read_bytes() == text.encode("utf-8")
    assert files.existing_backup(str(path), root) is None  # what it kept is back in place


def test_crlf_stays_crlf_throughout(tmp_path: Path, env: dict[str, str]) -> None:
    text = json.dumps(USER, indent=2).replace("\n", "\r\n") + "\r\n"
    path = settings(env, text)
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_user_changes_after_install_are_kept_with_their_layout(tmp_path: Path, env: dict[str, str]) -> None:
    root = str(tmp_path)
    path = settings(env, HAND_MADE)
    claude.install(PREFIX, global_root=root, env=env)
    edited = path.read_text().replace('"model": "opus"', '"model": "sonnet"')
    path.write_text(edited)
    claude.uninstall(global_root=root, env=env)
    assert path.read_text() == HAND_MADE.replace('"model": "opus"', '"model": "sonnet"')
    # The user's file is not the backup any more, so the backup stays.
    assert files.existing_backup(str(path), root) is not None


def test_a_settings_file_hippod_created_goes_at_uninstall(tmp_path: Path, env: dict[str, str]) -> None:
    root = str(tmp_path)
    path = settings(env)
    claude.install(PREFIX, global_root=root, env=env)
    report = claude.uninstall(global_root=root, env=env)
    assert not path.exists() and f"Removed {path}, which held only hippod's entries" in report.lines


def codex_home(env: dict[str, str]) -> Path:
    home = Path(env["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    return home


def test_codex_hooks_json_it_created_leaves_no_file_and_no_backup(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root = str(tmp_path)
    path = codex_home(env) / "hooks.json"
    codex.install(PREFIX, global_root=root, env=env)
    # One of the two entries removed by hand; the next install appends it again, so the file it
    # rewrites (only hippod's entries) gets a backup.
    data = json.loads(path.read_text())
    del data["hooks"]["SessionStart"]
    path.write_text(json.dumps(data, indent=2) + "\n")
    codex.install(PREFIX, global_root=root, env=env)
    backup = files.existing_backup(str(path), root)
    assert backup is not None and "SessionStart" not in Path(backup).read_text()
    codex.uninstall(global_root=root, env=env)
    assert not path.exists() and files.existing_backup(str(path), root) is None
    assert not Path(root, files.BACKUPS_DIR).exists()  # nothing else was kept: no folder, no index
    assert sorted(os.listdir(codex_home(env))) == []


def test_codex_hooks_json_of_the_user_is_given_back(tmp_path: Path, env: dict[str, str]) -> None:
    root = str(tmp_path)
    path = codex_home(env) / "hooks.json"
    stop = '[{"hooks": [{"type": "command", "command": "notify"}]}]'
    text = '{\n    "hooks": {\n        "Stop": ' + stop + "\n    }\n}\n"
    path.write_text(text)
    codex.install(PREFIX, global_root=root, env=env)
    assert '\n        "UserPromptSubmit": [\n            {\n' in path.read_text()
    codex.uninstall(global_root=root, env=env)
    assert path.read_text() == text


def test_a_user_empty_file_stays(tmp_path: Path, env: dict[str, str]) -> None:
    root = str(tmp_path)
    path = settings(env, "{}")
    claude.install(PREFIX, global_root=root, env=env)
    claude.uninstall(global_root=root, env=env)
    assert path.read_text() == "{}"


def test_an_unparseable_file_names_where_it_stops_being_json(tmp_path: Path, env: dict[str, str]) -> None:
    path = settings(env, '{\n  "model": "opus"\n  "hooks": {}\n}\n')
    with pytest.raises(hookjson.SettingsError) as caught:
        claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert str(caught.value) == f"{path} is not valid JSON (Expecting ',' delimiter at line 3 column 3)"


# --- backups ------------------------------------------------------------------------------------------


def test_a_project_file_is_backed_up_in_its_store(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".hippo").mkdir(parents=True)
    (project / ".hippo" / "hippo.db").write_bytes(b"")
    (project / "docs").mkdir()
    for name in ("AGENTS.md", "docs/AGENTS.md"):
        path = project / name
        path.write_text("mine\n")
        files.write_atomic(str(path), "mine\nand hippod's\n", global_root=str(tmp_path / "global"))
        files.write_atomic(str(path), "third\n", global_root=str(tmp_path / "global"))
        backup = project / ".hippo" / "backups" / name
        assert backup.read_text() == "mine\n"  # the first copy only
    assert sorted(p.name for p in project.iterdir()) == [".hippo", "AGENTS.md", "docs"]
    index = json.loads((project / ".hippo" / "backups" / "index.json").read_text())
    assert index == {
        "AGENTS.md": str(project / "AGENTS.md"),
        "docs/AGENTS.md": str(project / "docs/AGENTS.md"),
    }


def test_a_file_outside_any_store_is_backed_up_in_the_global_store(tmp_path: Path) -> None:
    root = tmp_path / "global"
    path = tmp_path / "elsewhere" / "settings.json"
    path.parent.mkdir()
    path.write_text("{}\n")
    files.write_atomic(str(path), "{ }\n", global_root=str(root))
    backup = Path(files.backup_path(str(path), str(root)))
    assert backup.read_text() == "{}\n" and backup.is_relative_to(root / "backups")
    assert not list(path.parent.glob("*.hippo-bak")) and len(list(path.parent.iterdir())) == 1
    assert json.loads((root / "backups" / "index.json").read_text()) == {
        str(backup.relative_to(root / "backups")): str(path)
    }


def test_an_older_backup_beside_the_file_is_moved_into_the_store(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".hippo").mkdir(parents=True)
    (project / ".hippo" / "hippo.db").write_bytes(b"")
    path = project / "CLAUDE.md"
    path.write_text("hippod was here\n")
    (project / "CLAUDE.md.hippo-bak").write_text("the user's own\n")
    files.write_atomic(str(path), "again\n", global_root=str(tmp_path / "global"))
    assert not (project / "CLAUDE.md.hippo-bak").exists()
    assert (project / ".hippo" / "backups" / "CLAUDE.md").read_text() == "the user's own\n"


# --- the layout-keeping writer itself -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "change", "expected"),
    [
        ('{"a": [1, 2, 3]}', lambda d: d["a"].remove(2), '{"a": [1, 3]}'),
        (
            '{\n  "a": [\n    1,\n    2\n  ]\n}',
            lambda d: d["a"].append(3),
            '{\n  "a": [\n    1,\n    2,\n    3\n  ]\n}',
        ),
        ('{"a":1,"b":2}', lambda d: d.pop("a"), '{"b":2}'),
        ('{\n\t"a": 1\n}', lambda d: d.update(b=[True]), '{\n\t"a": 1,\n\t"b": [\n\t\ttrue\n\t]\n}'),
        ('{"n": 1.50, "x": 1}', lambda d: d.update(x=2), '{"n": 1.50, "x": 2}'),
        ('{"flag": 1}', lambda d: d.update(flag=True), '{"flag": true}'),
    ],
)
def test_render_changes_only_what_changed(text: str, change: Any, expected: str) -> None:
    data = json.loads(text)
    change(data)
    assert jsonedit.render(text, data) == expected
