"""The Spool, Workspaces and Watch roots checks: files waiting under the spool, the daily run's
registry, and the folders the agent-note watcher follows."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from hippoctl.protocol import spool
from hippoctl.protocol.replies import WatchStatus
from hippoctl.protocol.replies_doctor import FAIL, OK, WARN, Check
from hippoctl.protocol.wording import plural
from hippod.doctor import Findings, hippoctl
from hippod.doctor.stores import PENDING_MINUTES, StoreFacts
from hippod.store import workspaces

COMPACTION_KINDS = ("pre-compact", "post-compact")
_SHOWN = 3


def _listed(paths: Sequence[str]) -> str:
    more = len(paths) - _SHOWN
    return ", ".join(paths[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def old_compaction_files(spool_dir: str, now: float, minutes: float = PENDING_MINUTES) -> list[str]:
    """Compaction spool files not replayed within `minutes` of being written (by modification time)."""
    cutoff = now - minutes * 60
    old: list[str] = []
    for kind in COMPACTION_KINDS:
        folder = os.path.join(spool_dir, kind)
        for name in sorted(spool.json_names(folder)):
            path = os.path.join(folder, name)
            try:
                if os.stat(path).st_mtime < cutoff:
                    old.append(path)
            except OSError:
                continue  # replayed and deleted while we looked
    return old


def spool_check(spool_dir: str, stores: Sequence[StoreFacts], now: float | None = None) -> list[Check]:
    """Fail on compaction spool files older than 10 minutes and on anything in `spool/failed/`;
    warn on compaction rows still pending after 10 minutes."""
    found = Findings("Spool")
    old = old_compaction_files(spool_dir, time.time() if now is None else now)
    if old:
        waiting = plural(len(old), "compaction spool file")
        found.add(
            FAIL,
            f"{waiting} waiting more than {PENDING_MINUTES} min: {_listed(old)}",
            f"{hippoctl('daemon', 'restart')} (the spool is replayed at start; see hippod.log if they stay)",
        )
    failed_dir = os.path.join(spool_dir, spool.FAILED)
    failed = sorted(spool.json_names(failed_dir))
    if failed:
        where = "is" if len(failed) == 1 else "are"
        found.add(
            FAIL,
            f"{plural(len(failed), 'spool file')} could not be applied and {where} in {failed_dir}",
            f"read the .err notes in {failed_dir}; move a file back to its kind's folder to retry, "
            "or delete it",
        )
    for facts in stores:
        if facts.stale_compactions:
            pending_rows = plural(facts.stale_compactions, "compaction")
            found.add(
                WARN,
                f"{pending_rows} in the {facts.kind} store still pending after {PENDING_MINUTES} min "
                "(pre-compact ran, post-compact never came)",
                hippoctl("sleep", "--global")
                if facts.kind == "global"
                else hippoctl("sleep", directory=facts.project_dir),
            )
    pending, _ = spool.count(spool_dir)
    return found.checks(f"nothing stuck ({plural(pending, 'file')} waiting to be replayed)")


def workspaces_check(global_root: str) -> list[Check]:
    """Warn on registered paths that are missing or hold no store; fail on an unreadable registry."""
    found = Findings("Workspaces")
    try:
        paths = workspaces.read(global_root)
    except workspaces.RegistryUnreadable as exc:
        found.add(
            FAIL,
            f"{exc}; the daily run visits no project",
            f"move {workspaces.registry_path(global_root)} aside, then run hippoctl init in each project",
        )
        return found.checks("")
    for entry in (workspaces.describe(p) for p in paths):
        if not entry.exists:
            found.add(WARN, f"{entry.path} is missing", hippoctl("workspaces", "remove", entry.path))
        elif not entry.has_store:
            found.add(WARN, f"{entry.path} has no store", hippoctl("init", directory=entry.path))
    return found.checks(f"{len(paths)} registered, all present" if paths else "none registered")


def watch_check(watch: WatchStatus | None, daemon_json: str) -> Check:
    """The agent-note watcher's roots: those watched and those not there yet; warn when it is off."""
    if watch is None:
        return Check(
            "Watch roots",
            WARN,
            "the agent-note watcher is off: changed agent notes wait for the next session end or sleep",
            f'set "watch": {{"enabled": true}} in {daemon_json}, then run: {hippoctl("daemon", "restart")}',
        )
    watched = f"{len(watch.roots)} watched" + (f" ({_listed(watch.roots)})" if watch.roots else "")
    if watch.missing:
        watched += f"; {len(watch.missing)} not there yet ({_listed(watch.missing)})"
    return Check("Watch roots", OK, watched)
