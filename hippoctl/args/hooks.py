"""Arguments of the compaction and session hook verbs: pre-compact, post-compact, compact-resume,
session-end and last-sleep (ingest.md §8, continuity.md §4, integrations.md). The hook transport
(hippoctl/hook.py) reads the host's JSON from stdin and puts it on the body."""

from __future__ import annotations

import argparse

from hippoctl.args.argcheck import COUNT
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m


def _strict(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true", help="report failures with exit codes")


def add_verbs(verb: AddVerb) -> None:
    """Register the compaction and session hook verbs on the hippoctl parser."""
    _strict(
        verb(
            "pre-compact",
            "hook verb: record a compaction and snapshot the task (PreCompact JSON)",
            "hippoctl pre-compact < payload.json",
            "hippoctl pre-compact --strict < payload.json",
        )
    )
    _strict(
        verb(
            "post-compact",
            "hook verb: save the compaction's 'Memories for hippo' (PostCompact JSON)",
            "hippoctl post-compact < payload.json",
            "hippoctl post-compact --strict --json < payload.json",
        )
    )
    _strict(
        verb(
            "compact-resume",
            "hook verb: print the task snapshot back after a compaction",
            "hippoctl compact-resume < payload.json",
            "hippoctl compact-resume --strict",
        )
    )
    p = verb(
        "session-end",
        "hook verb: queue sleep, transcript capture and re-read accounting",
        "hippoctl session-end < payload.json",
        "hippoctl session-end --codex-offset 52311",
    )
    p.add_argument("--codex-offset", type=COUNT, metavar="N", help="byte offset of Codex's history.jsonl")
    p.add_argument(
        "--once",
        action="store_true",
        help="end each session id (the hook input's session_id, else HIPPO_SESSION_ID) only once per store",
    )
    _strict(p)
    p = verb(
        "last-sleep",
        "hook verb: print the previous session's consolidation, then clear it",
        "hippoctl last-sleep",
        "hippoctl last-sleep --keep --json",
    )
    p.add_argument("--keep", action="store_true", help="keep it for the next session too")
    p.add_argument("--verbose", action="store_true", help="the full report instead of the summary")
    _strict(p)


def _session_end(args: argparse.Namespace) -> m.Body:
    return m.SessionEnd(codex_offset=args.codex_offset, once=args.once)


BUILDERS: dict[str, Builder] = {
    "pre-compact": lambda _args: m.PreCompact(),
    "post-compact": lambda _args: m.PostCompact(),
    "compact-resume": lambda _args: m.CompactResume(),
    "session-end": _session_end,
    "last-sleep": lambda args: m.LastSleep(keep=args.keep, verbose=args.verbose),
}

register("hooks", add_verbs, BUILDERS)
