"""Agent notes: the tool table, homes, tool selection, and each source's parsing (ingest.md §4)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from hippod.agentnotes import parse, sources
from hippod.agentnotes.tools import TOOLS, encode_root, selected_tools, tool_home

CLAUDE_NOTE = (
    "---\nname: tests\ndescription: how to run tests\ntype: project\n---\n\nRun pytest -x before pushing.\n"
)


def test_encoded_root_replaces_everything_but_letters_and_digits() -> None:
    assert encode_root("/home/u/my.proj_2") == "-home-u-my-proj-2"
    assert encode_root("/tmp/a b/ü") == "-tmp-a-b--"


def test_homes_follow_config_then_env_then_default(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "XDG_CONFIG_HOME": "/x"}
    assert tool_home("claude-code", {}, env) == str(tmp_path / "cc")
    assert tool_home("codex", {}, env) == str(tmp_path / ".codex")
    assert tool_home("codex", {}, {**env, "CODEX_HOME": "~/cx"}) == str(tmp_path / "cx")
    assert tool_home("openclaw", {}, env) == str(tmp_path / ".openclaw" / "workspace")
    assert tool_home("copilot-vscode", {}, env) == "/x/Code/User"
    config = {"agentMemories": {"paths": {"claude-code": "~/elsewhere"}}}
    assert tool_home("claude-code", config, env) == str(tmp_path / "elsewhere")


def test_tool_selection_env_wins_over_config() -> None:
    assert selected_tools({}, {}) == (list(TOOLS), [])
    config = {"agentMemories": {"tools": ["codex", "openclaw"]}}
    assert selected_tools(config, {}) == (["codex", "openclaw"], [])
    assert selected_tools({"agentMemories": {"tools": []}}, {}) == ([], [])
    assert selected_tools(config, {"HIPPO_AGENT_MEMORY_TOOLS": "none"}) == ([], [])
    assert selected_tools(config, {"HIPPO_AGENT_MEMORY_TOOLS": "Qwen-Code, claude-code"}) == (
        ["claude-code", "qwen-code"],
        [],
    )
    tools, warnings = selected_tools({}, {"HIPPO_AGENT_MEMORY_TOOLS": "codex,cursor"})
    assert tools == ["codex"] and warnings == [
        "HIPPO_AGENT_MEMORY_TOOLS: unknown agent tool 'cursor' ignored"
    ]


def test_front_matter_is_split_off() -> None:
    assert parse.split_front_matter(CLAUDE_NOTE) == (True, "\nRun pytest -x before pushing.\n")
    assert parse.split_front_matter("no front matter\n---\n") == (False, "no front matter\n---\n")
    assert parse.split_front_matter("---\nunterminated") == (False, "---\nunterminated")


def test_bullets_under_the_named_headings_only() -> None:
    text = (
        "# Memory\n- not this one\n"
        "## User Profile\n- Works mostly in Rust\n  and some Go\n* Lives in Lisbon\n\n"
        "### Details\n- nested section bullet\n"
        "## Preferences\n1. Short answers please\n"
        "## Other\n- outside again\n"
        "## tips\n+ Use the Makefile\n"
    )
    items = parse.bullets_under(text, sources.CODEX_HEADINGS)
    assert items == [
        "Works mostly in Rust and some Go",
        "Lives in Lisbon",
        "nested section bullet",
        "Short answers please",
        "Use the Makefile",
    ]


def test_email_masking_and_the_cut() -> None:
    assert parse.mask_emails("mail jane.doe@ex.com or x@a.b.org") == "mail j***@ex.com or x***@a.b.org"
    assert parse.cut("a" * 1500) == "a" * 1500
    assert parse.cut("a" * 1501) == "a" * 1500 + " [truncated]"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_claude_project_notes_need_front_matter_and_skip_memory_md(tmp_path: Path) -> None:
    home, root = tmp_path / ".claude", "/work/proj"
    folder = home / "projects" / encode_root(root) / "memory"
    _write(folder / "tests.md", CLAUDE_NOTE)
    _write(folder / "MEMORY.md", "- [tests](tests.md)\n")
    _write(folder / "plain.md", "no front matter here at all\n")
    _write(folder / "notes.txt", CLAUDE_NOTE)
    scan = sources.read_locations(
        "claude-code", str(home), sources.project_locations("claude-code", str(home), root)
    )
    assert [(n.text, n.source) for n in scan.notes] == [
        ("Run pytest -x before pushing.", f"agent:claude-code:projects/{encode_root(root)}/memory/tests.md")
    ]
    assert scan.no_front_matter == 1
    assert scan.found == [str(folder)] and len(scan.complete) == 1


def test_claude_auto_memory_directory_relative_is_project_absolute_is_user(tmp_path: Path) -> None:
    home, root = tmp_path / ".claude", tmp_path / "proj"
    _write(home / "settings.json", json.dumps({"autoMemoryDirectory": ".claude/memory"}))
    _write(root / ".claude" / "memory" / "a.md", CLAUDE_NOTE)
    locations = sources.project_locations("claude-code", str(home), str(root))
    assert [loc.path for loc in locations][1] == str(root / ".claude" / "memory")
    scan = sources.read_locations("claude-code", str(home), locations)
    assert [n.source for n in scan.notes] == [f"agent:claude-code:{root}/.claude/memory/a.md"]
    assert sources.user_locations("claude-code", str(home)) == []
    _write(home / "settings.json", json.dumps({"autoMemoryDirectory": str(tmp_path / "shared")}))
    assert [loc.path for loc in sources.user_locations("claude-code", str(home))] == [
        str(tmp_path / "shared")
    ]
    assert len(sources.project_locations("claude-code", str(home), str(root))) == 1


def test_bullet_files_of_codex_gemini_and_qwen(tmp_path: Path) -> None:
    codex = tmp_path / ".codex"
    _write(
        codex / "memories" / "memory_summary.md", "# Summary\n## Preferences\n- Prefers tabs over spaces\n"
    )
    gemini = tmp_path / ".gemini"
    _write(gemini / "GEMINI.md", "# Mine\n- ignored\n## Gemini Added Memories\n- The user's dog is Rex\n")
    qwen = tmp_path / ".qwen"
    _write(
        qwen / "QWEN.md", "## Qwen Added Memories\n- Deploys happen on Fridays\n- Deploys happen on Fridays\n"
    )
    found = {}
    for tool, home in (("codex", codex), ("gemini-cli", gemini), ("qwen-code", qwen)):
        scan = sources.read_locations(tool, str(home), sources.user_locations(tool, str(home)))
        found[tool] = [n.text for n in scan.notes]
        assert all(n.key.startswith(n.path + "#") for n in scan.notes)
    assert found == {
        "codex": ["Prefers tabs over spaces"],
        "gemini-cli": ["The user's dog is Rex"],
        "qwen-code": ["Deploys happen on Fridays"],
    }


def test_gemini_project_folder_only_when_enabled_qwen_always(tmp_path: Path) -> None:
    root = "/work/proj"
    digest = hashlib.sha256(root.encode()).hexdigest()
    gemini, qwen = tmp_path / ".gemini", tmp_path / ".qwen"
    assert sources.project_locations("gemini-cli", str(gemini), root) == []
    _write(gemini / "settings.json", json.dumps({"experimental": {"autoMemory": True}}))
    assert [loc.path for loc in sources.project_locations("gemini-cli", str(gemini), root)] == [
        str(gemini / "tmp" / digest / "memory")
    ]
    assert [loc.path for loc in sources.project_locations("qwen-code", str(qwen), root)] == [
        str(qwen / "tmp" / digest / "memory")
    ]


def test_copilot_user_and_workspace_memories(tmp_path: Path) -> None:
    home, root = tmp_path / "Code" / "User", tmp_path / "my proj"
    user = home / "globalStorage" / "github.copilot-chat" / "memory-tool" / "memories"
    _write(user / "prefs.md", "Answer in British English")
    other = home / "workspaceStorage" / "aaa"
    _write(other / "workspace.json", json.dumps({"folder": "file:///somewhere/else"}))
    mine = home / "workspaceStorage" / "bbb"
    _write(mine / "workspace.json", json.dumps({"folder": "file://" + str(root).replace(" ", "%20")}))
    _write(
        mine / "GitHub.copilot-chat" / "memory-tool" / "memories" / "repo" / "build.md", "Build with make all"
    )
    user_scan = sources.read_locations(
        "copilot-vscode", str(home), sources.user_locations("copilot-vscode", str(home))
    )
    assert [n.text for n in user_scan.notes] == ["Answer in British English"]
    locations = sources.project_locations("copilot-vscode", str(home), str(root))
    scan = sources.read_locations("copilot-vscode", str(home), locations)
    assert [n.text for n in scan.notes] == ["Build with make all"]
    assert sources.project_locations("copilot-vscode", str(home), "/nowhere") == []


def test_openclaw_memory_md_is_one_note(tmp_path: Path) -> None:
    home = tmp_path / ".openclaw" / "workspace"
    _write(home / "MEMORY.md", "# Memory\n\nThe user likes terse commit messages.\n")
    scan = sources.read_locations("openclaw", str(home), sources.user_locations("openclaw", str(home)))
    assert [(n.key, n.source) for n in scan.notes] == [(str(home / "MEMORY.md"), "agent:openclaw:MEMORY.md")]


def test_a_missing_home_reads_nothing_and_judges_nothing(tmp_path: Path) -> None:
    home = tmp_path / "absent"
    scan = sources.read_locations("codex", str(home), sources.user_locations("codex", str(home)))
    assert scan.notes == [] and scan.complete == [] and not scan.home_exists


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_not_complete(tmp_path: Path) -> None:
    home, root = tmp_path / ".claude", "/p"
    folder = home / "projects" / encode_root(root) / "memory"
    _write(folder / "a.md", CLAUDE_NOTE)
    folder.chmod(0)
    try:
        scan = sources.read_locations(
            "claude-code", str(home), sources.project_locations("claude-code", str(home), root)
        )
    finally:
        folder.chmod(0o700)
    assert scan.complete == [] and scan.unreadable == [str(folder)]
