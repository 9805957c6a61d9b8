"""Replies of `hook list`, `hook install` and `hook uninstall` (integrations.md §8)."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class HookFile(Reply):
    """One file a target uses. kind: block | legacy-block | hooks | plugin | config. state: installed,
    outdated, edited or absent; `detail` says why (e.g. `5 of 7 entries`, `no such file`)."""

    kind: str
    path: str
    state: str
    detail: str = ""


class HookTarget(Reply):
    """A target's state over the files that apply to it (a missing project file or agent home does
    not count): installed when all are current, absent when none holds anything of hippod's."""

    target: str
    detected: bool
    state: str
    files: list[HookFile]


class HookListReply(Reply):
    project: str
    targets: list[HookTarget]


class HookChangeReply(Reply):
    """What `hook install|uninstall <target>` did: one line per change; warnings also go to stderr."""

    target: str
    action: str
    lines: list[str]
    warnings: list[str]
