"""Instruction blocks (integrations.md §4): patching CLAUDE.md / AGENTS.md text and files for real,
which prefixes count as current on this machine, and which commands doctor may run."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from hippod.integrations import agent_checks, blockfiles, blocks, files, installed

USER_TEXT = "# My project\n\nBuild with `make`.\n"
# How the installing client starts itself (selfcommand.hook_command), as the block names it.
CLIENT = "/opt/hippo/bin/hippoctl"
OLD_BODY = "## Project Memory (Hippo)\n\nAn older wording of the block."


@pytest.fixture
def old_shipped(monkeypatch: pytest.MonkeyPatch) -> str:
    """Pretend OLD_BODY shipped as CLAUDE.md version 0."""
    monkeypatch.setitem(blocks.SHIPPED, blocks.digest(OLD_BODY), (blocks.CLAUDE, "0"))
    return f"{USER_TEXT}\n{blocks.START}\n{OLD_BODY}\n{blocks.END}\n"


def test_bodies_say_what_no_hook_does() -> None:
    claude, agents = (
        blocks.current_body(blocks.CLAUDE, "hippoctl"),
        blocks.current_body(blocks.AGENTS, "hippoctl"),
    )
    for body in (claude, agents):
        assert body.startswith("## Project Memory (Hippo)\n")
        assert "`hippoctl context --auto --budget 1500`" in body
        assert '`hippoctl remember "<what went wrong and why>" --error`' in body
        assert "hippo " not in body.replace("hippo block", "")  # every command is hippoctl
    assert "hippoctl capture --stdin" in agents and "hippoctl capture --stdin" not in claude
    assert "leaving out secrets" in agents and "secrets" not in claude
    assert "arrive with every prompt" in claude and "arrive with every prompt" not in agents
    assert len(claude) < 450 and len(agents) < 700  # read on every session: keep them short


def test_every_command_starts_with_the_installing_client() -> None:
    claude, agents = blocks.current_body(blocks.CLAUDE, CLIENT), blocks.current_body(blocks.AGENTS, CLIENT)
    assert blocks.commands(claude) == [
        f"{CLIENT} context --auto --budget 1500",
        f'{CLIENT} remember "<what went wrong and why>" --error',
    ]
    assert blocks.commands(agents) == [
        f"{CLIENT} context --auto --budget 1500",
        f'{CLIENT} remember "<what went wrong and why>" --error',
        f'{CLIENT} remember "<what you learned and why>"',
        f"{CLIENT} capture --stdin",
    ]
    assert "`hippoctl " not in claude + agents


def test_every_shipped_body_is_known() -> None:
    for (variant, version), body in blocks.BODIES.items():
        if blocks.PREFIX in body:  # a template: known under any hippoctl prefix
            for prefix in (CLIENT, "/usr/bin/python3 -m hippoctl", "~/'my venv/bin/hippoctl'"):
                assert blocks.unedited(body.replace(blocks.PREFIX, prefix))
            assert not blocks.unedited(body.replace(blocks.PREFIX, "rm -rf /"))
        else:
            assert blocks.SHIPPED[blocks.digest(body)] == (variant, str(version))
    assert blocks.digest("x\r\n") == blocks.digest("\nx\n")


def test_a_block_of_bare_hippoctl_commands_is_replaced_in_place() -> None:
    old = blocks.BODIES[(blocks.CLAUDE, 1)]
    assert "`hippoctl context --auto --budget 1500`" in old
    text = f"intro\n\n{blocks.START}\n{old}\n{blocks.END}\n\nafter\n"
    assert blocks.state(text, blocks.CLAUDE, CLIENT) == "outdated"
    new, outcome = blocks.patched(text, blocks.CLAUDE, CLIENT)
    assert (new, outcome) == (f"intro\n\n{blocks.render(blocks.CLAUDE, CLIENT)}\n\nafter\n", "updated")
    # The current wording under a prefix that is no hippoctl here is older too; under this one, current.
    moved = blocks.render(blocks.CLAUDE, "/old/venv/bin/hippoctl")
    assert blocks.state(moved, blocks.CLAUDE, CLIENT) == "outdated"
    assert blocks.patched(moved, blocks.CLAUDE, CLIENT) == (blocks.render(blocks.CLAUDE, CLIENT), "updated")
    assert blocks.without(moved + "\n") == ("", "removed")


def test_the_prefix_is_quoted_and_written_from_the_home_folder() -> None:
    assert blocks.block_prefix("/home/ann/.local/bin/hippoctl", "/home/ann") == "~/.local/bin/hippoctl"
    spaced = shlex.join(["/home/ann/my venv/bin/python", "-m", "hippoctl"])
    prefix = blocks.block_prefix(spaced, "/home/ann/")
    assert prefix == "~/'my venv/bin/python' -m hippoctl"
    assert blocks.block_prefix(CLIENT, "/home/ann") == CLIENT
    assert blocks.block_prefix("/home/annex/bin/hippoctl", "/home/ann") == "/home/annex/bin/hippoctl"
    body = blocks.current_body(blocks.AGENTS, prefix)
    assert blocks.commands(body)[0] == "~/'my venv/bin/python' -m hippoctl context --auto --budget 1500"
    assert blocks.state(blocks.render(blocks.AGENTS, prefix), blocks.AGENTS, prefix) == "installed"


def test_append_after_a_blank_line_then_nothing() -> None:
    text, outcome = blocks.patched(USER_TEXT, blocks.CLAUDE, CLIENT)
    assert outcome == "added"
    assert text == USER_TEXT + "\n" + blocks.render(blocks.CLAUDE, CLIENT) + "\n"
    assert blocks.patched(text, blocks.CLAUDE, CLIENT) == (text, "current")
    assert blocks.state(text, blocks.CLAUDE, CLIENT) == "installed"


def test_append_to_unterminated_last_line_and_empty_file() -> None:
    assert (
        blocks.patched("no newline", blocks.AGENTS, CLIENT)[0]
        == "no newline\n\n" + blocks.render(blocks.AGENTS, CLIENT) + "\n"
    )
    assert blocks.patched("", blocks.AGENTS, CLIENT)[0] == blocks.render(blocks.AGENTS, CLIENT) + "\n"


def test_older_shipped_body_is_replaced_text_outside_kept(old_shipped: str) -> None:
    text = "intro\n" + old_shipped + "after the block\n"
    new, outcome = blocks.patched(text, blocks.CLAUDE, CLIENT)
    assert outcome == "updated"
    assert new == "intro\n" + USER_TEXT + "\n" + blocks.render(blocks.CLAUDE, CLIENT) + "\nafter the block\n"


def test_edited_and_unterminated_blocks_are_left_alone() -> None:
    edited = f"{USER_TEXT}{blocks.START}\n## Project Memory (Hippo)\nmy own words\n{blocks.END}\n"
    unterminated = f"{USER_TEXT}{blocks.START}\nhalf a block\n"
    stray_end = f"{USER_TEXT}{blocks.END}\n"
    for text in (edited, unterminated, stray_end):
        assert blocks.patched(text, blocks.CLAUDE, CLIENT) == (text, "edited")
        assert blocks.without(text) == (text, "edited")


def test_crlf_file_keeps_its_line_endings() -> None:
    text = USER_TEXT.replace("\n", "\r\n")
    new, _ = blocks.patched(text, blocks.AGENTS, CLIENT)
    assert "\n" not in new.replace("\r\n", "")
    assert blocks.state(new, blocks.AGENTS, CLIENT) == "installed"
    assert blocks.without(new) == (text, "removed")


@pytest.mark.parametrize("before", [USER_TEXT, "", "a\n\n", "no newline"])
def test_without_undoes_the_append(before: str) -> None:
    text, _ = blocks.patched(before, blocks.CLAUDE, CLIENT)
    restored, outcome = blocks.without(text)
    assert outcome == "removed"
    assert restored == (before if before.endswith("\n") or not before else before + "\n")


def test_without_a_block_in_the_middle() -> None:
    text = f"top\n\n{blocks.render(blocks.CLAUDE, CLIENT)}\n\nbottom\n"
    assert blocks.without(text) == ("top\n\nbottom\n", "removed")


# --- files and installed.json -------------------------------------------------------------------------


def records(root: Path) -> list[installed.Record]:
    return installed.load(str(root))


def test_file_is_never_created(tmp_path: Path) -> None:
    report = blockfiles.install(
        "claude-code", str(tmp_path / "CLAUDE.md"), blocks.CLAUDE, CLIENT, global_root=str(tmp_path)
    )
    assert not (tmp_path / "CLAUDE.md").exists() and report.lines == [] and records(tmp_path) == []


def test_install_twice_one_backup_and_a_record(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text(USER_TEXT)
    first = blockfiles.install("claude-code", str(path), blocks.CLAUDE, CLIENT, global_root=str(tmp_path))
    after, recorded = path.read_bytes(), Path(installed.path(str(tmp_path))).read_bytes()
    second = blockfiles.install("claude-code", str(path), blocks.CLAUDE, CLIENT, global_root=str(tmp_path))
    assert first.lines == [f"Installed claude-code block in {path}"] and second.lines == []
    assert path.read_bytes() == after
    # The record keeps its first installed_at: re-running changes no file, installed.json included.
    assert Path(installed.path(str(tmp_path))).read_bytes() == recorded
    assert Path(files.backup_path(str(path), str(tmp_path))).read_text() == USER_TEXT
    [record] = records(tmp_path)
    assert (record.target, record.kind, record.file) == ("claude-code", "block", str(path))
    assert record.digest == blocks.digest(blocks.current_body(blocks.CLAUDE, CLIENT))


def test_edited_block_reported_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    text = f"{blocks.START}\nmine now\n{blocks.END}\n"
    path.write_text(text)
    report = blockfiles.install("codex", str(path), blocks.AGENTS, CLIENT, global_root=str(tmp_path))
    assert report.warnings == [f"edited hippo block in {path} left alone"]
    assert path.read_text() == text and files.existing_backup(str(path), str(tmp_path)) is None


def test_agents_block_stays_while_another_target_has_it(tmp_path: Path) -> None:
    path, root = tmp_path / "AGENTS.md", str(tmp_path)
    path.write_text(USER_TEXT)
    for target in ("codex", "cursor"):
        blockfiles.install(target, str(path), blocks.AGENTS, CLIENT, global_root=root)
    assert path.read_text().count(blocks.START) == 1
    kept = blockfiles.uninstall("cursor", str(path), global_root=root)
    assert kept.lines == [f"Kept the hippo block in {path} for codex"]
    assert blocks.state(path.read_text(), blocks.AGENTS, CLIENT) == "installed"
    gone = blockfiles.uninstall("codex", str(path), global_root=root)
    assert gone.lines == [f"Removed hippo block from {path}"]
    assert path.read_text() == USER_TEXT and records(tmp_path) == []


def test_uninstall_without_a_record_keeps_the_block(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    text = blocks.patched(USER_TEXT, blocks.AGENTS, CLIENT)[0]
    path.write_text(text)
    report = blockfiles.uninstall("pi", str(path), global_root=str(tmp_path))
    assert report.warnings == [f"hippo block in {path} kept: pi did not install it"]
    assert path.read_text() == text


def test_refresh_replaces_older_body_and_updates_records(tmp_path: Path, old_shipped: str) -> None:
    path, root = tmp_path / "CLAUDE.md", str(tmp_path)
    path.write_text(old_shipped)
    installed.add(root, installed.Record(target="claude-code", kind="block", file=str(path), digest="old"))
    report = blockfiles.refresh(str(path), blocks.CLAUDE, CLIENT, global_root=root)
    assert report.lines == [f"Updated hippo block in {path}"]
    assert path.read_text() == USER_TEXT + "\n" + blocks.render(blocks.CLAUDE, CLIENT) + "\n"
    assert [r.digest for r in records(tmp_path)] == [
        blocks.digest(blocks.current_body(blocks.CLAUDE, CLIENT))
    ]


def test_cursorrules_legacy_block_cleaned(tmp_path: Path) -> None:
    rules = tmp_path / ".cursorrules"
    rules.write_text(blocks.patched("Use tabs.\n", blocks.AGENTS, CLIENT)[0])
    report = blockfiles.clean_cursorrules(str(tmp_path), global_root=str(tmp_path))
    assert report.lines == [f"Removed legacy hippo block from {rules}"]
    assert rules.read_text() == "Use tabs.\n"
    rules.write_text(blocks.render(blocks.AGENTS, CLIENT) + "\n")
    blockfiles.clean_cursorrules(str(tmp_path), global_root=str(tmp_path))
    assert not rules.exists()
    rules.write_text(f"{blocks.START}\nedited\n{blocks.END}\n")
    assert blockfiles.clean_cursorrules(str(tmp_path), global_root=str(tmp_path)).warnings == [
        f"edited hippo block in {rules} left alone"
    ]
    assert os.path.exists(rules)


def test_crlf_file_keeps_its_line_endings_on_disk(tmp_path: Path) -> None:
    path, root = tmp_path / "CLAUDE.md", str(tmp_path)
    user = USER_TEXT.replace("\n", "\r\n").encode()
    path.write_bytes(user)
    blockfiles.install("claude-code", str(path), blocks.CLAUDE, CLIENT, global_root=root)
    written = path.read_bytes()
    assert written.startswith(user) and b"\n" not in written.replace(b"\r\n", b"")
    blockfiles.uninstall("claude-code", str(path), global_root=root)
    assert path.read_bytes() == user


def test_a_file_that_is_not_utf8_text_is_left_alone(tmp_path: Path) -> None:
    path, root = tmp_path / "CLAUDE.md", str(tmp_path)
    path.write_bytes(b"# Caf\xe9 notes\n")
    for report in (
        blockfiles.install("claude-code", str(path), blocks.CLAUDE, CLIENT, global_root=root),
        blockfiles.uninstall("claude-code", str(path), global_root=root),
    ):
        assert report.lines == [] and report.warnings == [f"{path} is not UTF-8 text; left alone"]
    assert path.read_bytes() == b"# Caf\xe9 notes\n" and files.existing_backup(str(path), root) is None


def test_agents_md_linked_to_claude_md_is_one_file_with_one_block(tmp_path: Path) -> None:
    root = str(tmp_path)
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text(USER_TEXT)
    (tmp_path / "AGENTS.md").symlink_to("CLAUDE.md")
    assert blockfiles.locate(root, blocks.CLAUDE) == (str(tmp_path / "AGENTS.md"), blocks.AGENTS)

    def install_both() -> None:
        for target, variant in (("claude-code", blocks.CLAUDE), ("codex", blocks.AGENTS)):
            path, kind = blockfiles.locate(root, variant)
            blockfiles.install(target, path, kind, CLIENT, global_root=root)

    install_both()
    after = claude_md.read_bytes()
    assert (tmp_path / "AGENTS.md").is_symlink() and after.count(blocks.START.encode()) == 1
    install_both()
    assert claude_md.read_bytes() == after  # the two installs agree: nothing swaps back and forth
    path, _ = blockfiles.locate(root, blocks.AGENTS)
    kept = blockfiles.uninstall("codex", path, global_root=root)
    assert kept.lines == [f"Kept the hippo block in {path} for claude-code"]
    blockfiles.uninstall("claude-code", path, global_root=root)
    assert claude_md.read_text() == USER_TEXT and (tmp_path / "AGENTS.md").is_symlink()


def executable(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_a_prefix_resolves_to_an_executable_hippoctl_written_as_hippod_writes_it(tmp_path: Path) -> None:
    home = str(tmp_path)
    executable(tmp_path / ".local" / "bin" / "hippoctl")
    executable(tmp_path / "venv" / "bin" / "python")
    executable(tmp_path / "$(x)" / "hippoctl")  # a folder whose name the shell expands unless quoted
    Path(executable(tmp_path / "plain" / "hippoctl")).chmod(0o644)
    assert blocks.resolves("~/.local/bin/hippoctl", CLIENT, home)
    assert blocks.resolves("~/'$(x)/hippoctl'", CLIENT, home)  # quoted, as block_prefix quotes it
    own_python = "~/venv/bin/python -m hippoctl"
    assert blocks.resolves(own_python, f"{tmp_path}/venv/../venv/bin/python -m hippoctl", home)
    assert blocks.resolves(CLIENT, CLIENT, home)  # this client's own, whatever is on disk
    for nowhere in (
        "hippoctl",  # a bare name: the agent's PATH decides
        "./.local/bin/hippoctl",  # relative: the agent's working folder (the repository) decides
        f"{tmp_path}/.local/bin/hippoctl",  # block_prefix writes it from ~/
        "/opt/gone/bin/hippoctl",
        "~/plain/hippoctl",  # not executable
        '~/"$(x)/hippoctl"',  # the agent's shell would run x
        "~/$(x)/hippoctl",
    ):
        assert not blocks.resolves(nowhere, CLIENT, home), nowhere
    assert not blocks.resolves(own_python, CLIENT, home)  # another interpreter may lack hippoctl


def test_the_current_body_under_a_prefix_that_resolves_here_stays(tmp_path: Path) -> None:
    """A teammate's committed block is current where its hippoctl is here too: nothing rewrites it."""
    theirs = executable(tmp_path / "teammate" / "bin" / "hippoctl")
    path, root = tmp_path / "CLAUDE.md", str(tmp_path)
    text = f"{USER_TEXT}\n{blocks.render(blocks.CLAUDE, theirs)}\n"
    path.write_text(text)
    assert blocks.state(text, blocks.CLAUDE, CLIENT) == "installed"
    assert blocks.patched(text, blocks.CLAUDE, CLIENT) == (text, "current")
    assert blockfiles.refresh(str(path), blocks.CLAUDE, CLIENT, global_root=root).lines == []
    assert blockfiles.install("claude-code", str(path), blocks.CLAUDE, CLIENT, global_root=root).lines == []
    assert path.read_text() == text
    # The older wording under it is still older, as is the current one once the path is gone.
    older = (
        f"{blocks.START}\n{blocks.BODIES[(blocks.AGENTS, 2)].replace(blocks.PREFIX, theirs)}\n{blocks.END}"
    )
    assert blocks.state(older, blocks.CLAUDE, CLIENT) == "outdated"
    os.remove(theirs)
    assert blocks.state(text, blocks.CLAUDE, CLIENT) == "outdated"


def test_doctor_runs_only_this_clients_own_commands_word_for_word(tmp_path: Path) -> None:
    project, root = tmp_path / "proj", str(tmp_path)
    teammate = executable(tmp_path / "teammate" / "bin" / "hippoctl")
    hostile = (
        f"`{CLIENT} context --auto --budget 1500`\n"
        f"`{CLIENT} context --auto --budget 1500; touch pwned`\n"
        f'`{CLIENT} remember "$(touch pwned)" --error`\n'
        "`./tools/hippoctl context --auto --budget 1500`\n"
        f"`{teammate} capture --stdin`\n"
    )
    project.mkdir()
    (project / "CLAUDE.md").write_text(f"{blocks.START}\n{hostile}{blocks.END}\n")
    (project / "AGENTS.md").write_text(blocks.render(blocks.AGENTS, teammate))
    found = agent_checks.block_commands(str(project), CLIENT, global_root=root, detected=[])
    assert [(c.entry, c.command) for c in found] == [
        (str(project / "CLAUDE.md"), f"{CLIENT} context --auto --budget 1500")
    ]
    checks = agent_checks.block_checks(str(project), CLIENT, global_root=root, detected=[])
    edited = [c.message.split("`")[1] for c in checks if "edited), so doctor does not run it" in c.message]
    assert edited == blocks.commands(hostile)[1:]
    assert {c.status for c in checks} == {"warn", "ok"}
