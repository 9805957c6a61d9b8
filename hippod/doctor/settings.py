"""The Config and Embeddings checks: daemon.json and the stores' config.json."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hippoctl.protocol.replies_doctor import FAIL, WARN, Check, StoreCounts
from hippoctl.protocol.wording import plural
from hippod.base.config import load_daemon_config
from hippod.base.errors import HippoError
from hippod.base.jsonfile import merge, read_object
from hippod.doctor import Findings, hippoctl
from hippod.embed.service import (
    EXTRA_HINT,
    MODEL_FILE,
    MODEL_PACKAGE,
    Settings,
    missing_module,
    require_api_key,
    settings,
)
from hippod.integrations import installed
from hippod.store.config import DEFAULT_MODEL, STORE_DEFAULTS


@dataclass
class StoreConfig:
    """One store's config.json: its path, the values in force (defaults included), a parse problem."""

    kind: str  # global or project
    path: str
    values: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None


def read_store_config(root: str, kind: str) -> StoreConfig:
    """`<root>/config.json` over the defaults; a missing file is the defaults, silently."""
    path = os.path.join(root, "config.json")
    overrides, problem = read_object(path)
    return StoreConfig(kind=kind, path=path, values=merge(STORE_DEFAULTS, overrides), problem=problem)


def config_check(global_root: str, stores: Sequence[StoreConfig]) -> list[Check]:
    """Fail on an unparseable daemon.json or config.json; warn on unusable values, memoryValue.enabled
    and an unreadable integrations/installed.json."""
    found = Findings("Config")
    daemon_json = os.path.join(global_root, "daemon.json")
    daemon = load_daemon_config(global_root)
    restart = hippoctl("daemon", "restart")
    if daemon.unreadable is not None:
        found.add(FAIL, daemon.unreadable, f"fix {daemon_json}, then run: {restart}")
    for warning in daemon.warnings:
        found.add(WARN, warning, f"correct it in {daemon_json}, then run: {restart}")
    for store in stores:
        if store.problem is not None:
            found.add(FAIL, store.problem, f"fix {store.path}")
        elif (store.values.get("memoryValue") or {}).get("enabled") is True:
            found.add(
                WARN,
                f"{store.path}: memoryValue.enabled is true, but hippod does not support memoryValue",
                f'set "memoryValue": {{"enabled": false}} in {store.path}',
            )
    if not installed.readable(global_root):
        record = installed.path(global_root)
        found.add(
            WARN,
            f"{record} is unreadable, so uninstall cannot tell hippod's entries apart",
            f"move it aside and re-run: {hippoctl('init')} (or {hippoctl('hook', 'install', '<target>')})",
        )
    return found.checks("daemon.json and config.json parse")


def model_dir() -> str | None:
    """Where the embeddings extra's model package is installed, found without importing anything;
    None when any package of the extra is missing."""
    spec = importlib.util.find_spec(MODEL_PACKAGE) if missing_module() is None else None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return next(iter(spec.submodule_search_locations))
    return os.path.dirname(spec.origin) if spec.origin else None


def embeddings_check(
    stores: Sequence[StoreConfig],
    package_dir: str | None,
    load_failures: Mapping[str, str],
    *,
    loaded: Mapping[str, float | None] | None = None,
    counts: Sequence[StoreCounts] = (),
    env: Mapping[str, str] | None = None,
) -> list[Check]:
    """Fail when a store sets `embeddings.enabled: true` without the extra, or without a usable model,
    or names an embedding API whose key the daemon's environment (`env`) lacks; say which model is in
    use, where its weights were read from, and each store's coverage."""
    found = Findings("Embeddings")
    modes: list[str] = []
    coverage = {c.kind: c for c in counts if c.error is None}
    for store in stores:
        wanted = settings(store.values)
        held = coverage.get(store.kind)
        mode = f"{store.kind} {wanted.mode}"
        if wanted.mode != "off" and held is not None:
            mode += f" ({held.vectors.get(wanted.model, 0)} of {plural(held.memories, 'memory')} embedded)"
        modes.append(mode)
        if wanted.remote:
            if wanted.mode != "off":
                _api_key_check(found, store.path, wanted, env)
            continue
        if wanted.mode != "required":
            continue
        where = f"{store.path} requires embeddings ({wanted.model})"
        if wanted.model != DEFAULT_MODEL:
            found.add(FAIL, f"{where}, a model hippod cannot load", f"set embeddings.model in {store.path}")
        elif package_dir is None:
            found.add(FAIL, f"{where}, but the embeddings extra is not installed", EXTRA_HINT)
        elif not os.path.isfile(os.path.join(package_dir, MODEL_FILE)):
            found.add(
                FAIL,
                f"{where}, but its weights are not in {package_dir}",
                f"reinstall the extra: {EXTRA_HINT}",
            )
        elif wanted.model in load_failures:
            found.add(FAIL, f"{where}: {load_failures[wanted.model]}", hippoctl("daemon", "restart"))
    extra = "installed" if package_dir is not None else "not installed (recall uses BM25 only)"
    if package_dir is not None:
        extra += f"; {_model_state(package_dir, loaded or {})}"
    return found.checks(f"{', '.join(modes)}; the extra is {extra}")


def _api_key_check(found: Findings, path: str, wanted: Settings, env: Mapping[str, str] | None) -> None:
    """Fail when the store's embedding API has no key: its memories get no vectors, and recall
    uses words alone."""
    try:
        require_api_key(wanted, env)
    except HippoError as exc:
        found.add(FAIL, f"{path}: {exc.message}", exc.hint)


def _model_state(package_dir: str, loaded: Mapping[str, float | None]) -> str:
    """Whether the daemon has loaded the model, from which file, and how fast it embeds."""
    weights = os.path.join(package_dir, MODEL_FILE)
    if DEFAULT_MODEL not in loaded:
        return f"{DEFAULT_MODEL} not loaded yet (it loads at the first recall or embed, from {weights})"
    speed = loaded[DEFAULT_MODEL]
    rate = f", {speed:,.0f} memories/s" if speed else ""
    return f"{DEFAULT_MODEL} loaded offline from {weights}{rate}"
