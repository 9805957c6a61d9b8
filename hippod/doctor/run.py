"""Every daemon-side check in the order `doctor` prints them (integrations.md §12), run in a worker thread."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from hippoctl.protocol.replies import ScheduleStatus, WatchStatus
from hippoctl.protocol.replies_doctor import FAIL, Check, HookCommand
from hippoctl.protocol.spool import spool_root
from hippod.doctor import folders, network, settings, sleep, stores
from hippod.doctor.service import service_check
from hippod.integrations import hook_commands, targets
from hippod.integrations.service_state import ServiceState

log = logging.getLogger("hippod.doctor")


@dataclass
class Inputs:
    """What the checks look at, gathered on the event loop before the thread starts."""

    global_root: str
    project_root: str | None  # the project store above the request's cwd, if any
    command: str  # the hook command prefix this client installs
    env: Mapping[str, str]
    now: datetime
    schedule: ScheduleStatus | None
    daily_log: str
    watch: WatchStatus | None  # the agent-note watcher's roots; None when it is off
    pid: int  # this daemon's
    service: ServiceState | None  # what the service manager says of the installed service, if any
    load_failures: dict[str, str] = field(default_factory=dict)  # embeddings models that would not load
    loaded: dict[str, float | None] = field(default_factory=dict)  # models loaded: memories/s so far


def guarded(name: str, check: Callable[[], list[Check]]) -> list[Check]:
    """Run one check; a check that crashes becomes a failed check instead of failing all of doctor."""
    try:
        return check()
    except Exception as exc:
        log.exception("the %s check failed", name)
        return [Check(name, FAIL, f"the check itself failed ({type(exc).__name__})", "see hippod.log")]


def inspect_stores(inputs: Inputs) -> list[stores.StoreFacts]:
    """Read-only facts of the global store and, when there is one, the request's project store."""
    found = [stores.inspect(inputs.global_root, "global", inputs.now)]
    if inputs.project_root is not None:
        found.append(stores.inspect(inputs.project_root, "project", inputs.now))
    return found


def store_configs(inputs: Inputs) -> list[settings.StoreConfig]:
    configs = [settings.read_store_config(inputs.global_root, "global")]
    if inputs.project_root is not None:
        configs.append(settings.read_store_config(inputs.project_root, "project"))
    return configs


def installed_commands(inputs: Inputs) -> list[HookCommand]:
    """The hook commands of ours the agents' files hold; none when reading them fails (logged)."""
    try:
        return hook_commands.installed(inputs.env)
    except Exception:
        log.exception("listing the installed hook commands failed")
        return []


def block_commands(inputs: Inputs) -> list[HookCommand]:
    """The commands in the project's hippo blocks; none when reading them fails (logged)."""
    if inputs.project_root is None:
        return []
    project = os.path.dirname(inputs.project_root)
    try:
        return targets.doctor_block_commands(
            project, inputs.command, global_root=inputs.global_root, env=inputs.env
        )
    except Exception:
        log.exception("listing the hippo blocks' commands failed")
        return []


def run_checks(inputs: Inputs) -> list[Check]:
    """Service, Stores, Sleep, Daily run, Workspaces, Watch roots, the agents', Spool, Config, Embeddings,
    Network."""
    facts = inspect_stores(inputs)
    configs = store_configs(inputs)
    project = os.path.dirname(inputs.project_root) if inputs.project_root is not None else None
    root = inputs.global_root
    checks: list[Check] = []
    checks += guarded(
        "Service",
        lambda: service_check(global_root=root, env=inputs.env, state=inputs.service, pid=inputs.pid),
    )
    for found in facts:
        checks += stores.store_check(found)
    checks += sleep.sleep_check(facts, inputs.now)
    checks.append(sleep.daily_check(inputs.schedule, inputs.daily_log))
    checks += guarded("Workspaces", lambda: folders.workspaces_check(root))
    checks.append(folders.watch_check(inputs.watch, os.path.join(root, "daemon.json")))
    checks += guarded(
        "Agents", lambda: targets.doctor_checks(project, inputs.command, global_root=root, env=inputs.env)
    )
    checks += folders.spool_check(spool_root(root), facts)
    checks += guarded("Config", lambda: settings.config_check(root, configs))
    counts = [stores.counts_of(found) for found in facts]
    checks += settings.embeddings_check(
        configs,
        settings.model_dir(),
        inputs.load_failures,
        loaded=inputs.loaded,
        counts=counts,
        env=inputs.env,
    )
    checks.append(network.network_check(inputs.env, configs, root))
    return checks
