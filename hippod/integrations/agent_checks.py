"""`doctor`'s agent checks (integrations.md §12): Claude Code, Codex, OpenCode and the instruction
blocks. Read-only; each problem's fix is the command that mends it."""

from __future__ import annotations

import os
from collections.abc import Mapping

from hippoctl.protocol.replies_doctor import Check, HookCommand
from hippoctl.protocol.wording import plural
from hippod.integrations import blockfiles, blocks, claude, codex, files, homes, installed, opencode

OK, WARN, FAIL = "ok", "warn", "fail"
SETUP = "hippoctl setup"  # rewrites the outdated blocks of the project it runs in


def _install(target: str) -> str:
    return f"hippoctl hook install {target}"


def claude_check(command: str, env: Mapping[str, str]) -> Check:
    name, fix = "Claude Code", _install("claude-code")
    if not os.path.isdir(homes.claude_home(env)):
        return Check(name=name, status=OK, message=f"not in use (no {homes.claude_home(env)})")
    status = claude.status(command, env)
    if status.error is not None:
        return Check(name=name, status=FAIL, message=status.error, fix=f"repair {status.path}, then {fix}")
    problems = []
    # An entry in an older form is there, only not current: it is named once, under older forms.
    missing = [s for s in status.missing if not any(s.owns(c) for c in status.outdated)]
    if missing:
        problems.append("missing: " + ", ".join(f"{s.event} {s.suffix}" for s in missing))
    if status.duplicated:
        problems.append("duplicated: " + ", ".join(f"{s.event} {s.suffix}" for s in status.duplicated))
    if status.outdated:
        problems.append("older forms: " + ", ".join(status.outdated))
    if problems:
        return Check(name=name, status=WARN, message=f"{status.path}: " + "; ".join(problems), fix=fix)
    return Check(
        name=name, status=OK, message=f"all {plural(len(status.present), 'hook entry')} in {status.path}"
    )


def codex_checks(command: str, env: Mapping[str, str]) -> list[Check]:
    """The entries, and (always, while Codex is in use) the reminder to trust them."""
    name = "Codex"
    status = codex.status(command, env)
    if not codex.home_exists(env):
        return [Check(name=name, status=OK, message=f"not in use (no {homes.codex_home(env)})")]
    if status.error is not None:
        entries = Check(name=name, status=FAIL, message=status.error, fix=f"repair {status.path}")
    elif status.outdated:
        message = f"older hippod hooks in {status.path}: " + ", ".join(status.outdated)
        entries = Check(name=name, status=WARN, message=message, fix=_install("codex"))
    elif status.missing:
        missing = ", ".join(f"{s.event} {s.suffix}" for s in status.missing)
        message = f"missing in {status.path}: {missing}"
        entries = Check(name=name, status=WARN, message=message, fix=_install("codex"))
    else:
        entries = Check(name=name, status=OK, message=f"both hook entries in {status.path}")
    trust = Check(
        name="Codex trust",
        status=WARN,
        message="Codex runs new hooks only after you trust them once: open /hooks in Codex and trust both",
    )
    return [entries, trust]


def opencode_check(project: str | None, command: str, env: Mapping[str, str]) -> Check:
    name, fix = "OpenCode", _install("opencode")
    path = opencode.plugin_path(env)
    state = opencode.plugin_state(command, env)
    stray = [p for p in opencode.config_paths(project, env) if opencode.stray_hooks(p)]
    if stray:
        return Check(name=name, status=WARN, message="stray hooks key in " + ", ".join(stray), fix=fix)
    if state == "installed":
        return Check(name=name, status=OK, message=f"plugin {path}")
    if state == "edited":
        message = f"{path} lacks the hippod marker (it is not hippod's)"
        return Check(name=name, status=WARN, message=message, fix=f"move {path} aside, then {fix}")
    if state == "outdated":
        return Check(name=name, status=WARN, message=f"plugin {path} is outdated", fix=fix)
    if not opencode.home_exists(env):
        return Check(name=name, status=OK, message=f"not in use (no {homes.opencode_home(env)})")
    return Check(name=name, status=WARN, message=f"plugin {path} missing", fix=fix)


def _agents_target(path: str, global_root: str, detected: list[str]) -> str:
    """The target to name in an AGENTS.md fix: one that installed the block, else one detected."""
    recorded = [r.target for r in installed.load(global_root) if r.kind == "block" and r.file == path]
    choices = recorded + [t for t in detected if t != "claude-code"]
    return choices[0] if choices else "codex"


def _block_files(project: str, global_root: str, detected: list[str]) -> list[tuple[str, str, str]]:
    """(path, variant, fix) of each instruction file the project may have."""
    found = []
    for path, kind in blockfiles.block_files(project):
        target = "claude-code" if kind == blocks.CLAUDE else _agents_target(path, global_root, detected)
        found.append((path, kind, _install(target)))
    return found


def _edited_fix(path: str, fix: str) -> str:
    return f"remove the block between the hippo markers in {path}, then {fix}"


def _file_check(path: str, kind: str, text: str, own: str, fix: str) -> Check:
    """The Blocks check of one file that exists: its block's state, and for a current block under
    another prefix, or an outdated one, the prefix its commands start."""
    name = "Blocks"
    state = blocks.state(text, kind, own)
    span = blocks.find(text)
    body = "" if span is None else span.body
    if state == "installed":
        other = blocks.current_prefix(body, kind)
        if other is None or other == own:
            return Check(name=name, status=OK, message=f"current hippo block in {path}")
        # A teammate's install that is here too: the agent's shell starts it, so it stays; doctor
        # runs only what starts this very client.
        message = f"current hippo block in {path}, under {other} (a hippoctl here, not this one: not run)"
        return Check(name=name, status=OK, message=message)
    if state == "edited":
        return Check(
            name=name,
            status=WARN,
            message=f"edited hippo block in {path} (left alone by install)",
            fix=_edited_fix(path, fix),
        )
    if state == "absent":
        return Check(name=name, status=WARN, message=f"no hippo block in {path}", fix=fix)
    prefix = blocks.template_prefix(body)
    if prefix is not None and not blocks.resolves(prefix, own):
        message = (
            f"an outdated hippo block in {path}: its commands start `{prefix}`, not a path to a hippoctl here"
        )
        return Check(name=name, status=FAIL, message=message, fix=SETUP)
    return Check(name=name, status=WARN, message=f"an outdated hippo block in {path}", fix=SETUP)


def _edited_commands(path: str, body: str, own: str, fix: str) -> list[Check]:
    """A warning for each command of an edited block that is none of the current bodies' under this
    client's prefix: doctor never runs those (the block is the repository's text, so such a command
    may be anything), and so cannot say whether it starts."""
    allowed = blocks.own_commands(own)
    return [
        Check(
            name="Blocks",
            status=WARN,
            message=f"{path}: `{c}` is not a command of hippod's block (edited), so doctor does not run it",
            fix=_edited_fix(path, fix),
        )
        for c in blocks.commands(body)
        if c not in allowed
    ]


def block_checks(project: str | None, command: str, *, global_root: str, detected: list[str]) -> list[Check]:
    """One check per instruction file the project has, and one per edited command of an edited
    block; `command` is the installing client's hook prefix, which a current block's commands start
    with."""
    name = "Blocks"
    if project is None:
        return [Check(name=name, status=OK, message="no project here")]
    own = blocks.block_prefix(command)
    checks = []
    for path, kind, fix in _block_files(project, global_root, detected):
        try:
            text = files.read_text(path)
        except files.Unreadable as exc:
            message = f"{exc} (left alone by install)"
            checks.append(Check(name=name, status=WARN, message=message, fix=f"save it as UTF-8, then {fix}"))
            continue
        if text is None:
            continue
        checks.append(_file_check(path, kind, text, own, fix))
        span = blocks.find(text)
        if span is not None and span.end >= 0 and blocks.state(text, kind, own) == "edited":
            checks += _edited_commands(path, span.body, own, fix)
    return checks or [Check(name=name, status=OK, message=f"no CLAUDE.md or AGENTS.md in {project}")]


def block_commands(
    project: str | None, command: str, *, global_root: str, detected: list[str]
) -> list[HookCommand]:
    """The commands of the project's hippo blocks for doctor's client half to run as an agent's shell
    would: only those that are, word for word, a command of the current bodies under this client's
    own prefix, so that what runs is this client with hippod's own arguments, whatever the
    repository's files say. The others are reported by block_checks, never run."""
    if project is None:
        return []
    own = blocks.block_prefix(command)
    allowed = blocks.own_commands(own)
    found = []
    for path, kind, fix in _block_files(project, global_root, detected):
        try:
            text = files.read_text(path)
        except files.Unreadable:
            continue
        span = None if text is None else blocks.find(text)
        if span is None or span.end < 0:
            continue
        if blocks.state(text, kind, own) == "edited":
            fix = _edited_fix(path, fix)
        found += [
            HookCommand(entry=path, command=c, fix=fix) for c in blocks.commands(span.body) if c in allowed
        ]
    return found


def checks(
    project: str | None, command: str, *, global_root: str, env: Mapping[str, str], detected: list[str]
) -> list[Check]:
    return [
        claude_check(command, env),
        *codex_checks(command, env),
        opencode_check(project, command, env),
        *block_checks(project, command, global_root=global_root, detected=detected),
    ]
