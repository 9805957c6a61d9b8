"""Copies of project memories in the global store: what `share` and `promote` make, and sleep's
auto-share (sleep.md §8)."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hippod.base import clock
from hippod.model import share as rules
from hippod.model.digest import refused
from hippod.model.locality import project_names
from hippod.model.memory import Memory
from hippod.store.sqlite import memories, rejections, sharing
from hippod.store.stores import SqliteStore


def global_id() -> str:
    """A fresh id for a copy in the global store."""
    return "g_" + secrets.token_hex(6)


async def share_keys(store: SqliteStore, tenant: str) -> dict[str, str]:
    """First-200-char key -> id of every memory of a tenant in a store."""
    return {
        rules.share_key(content): memory_id
        for memory_id, content in await sharing.contents(store.db.reader, tenant)
    }


async def copy_in(
    target: SqliteStore, copies: Sequence[Memory], *, actor: str, op: str, origins: Sequence[str]
) -> list[Memory]:
    """Insert copies in one transaction (tombstoned digests are refused); audit each; mirror them."""
    stored: list[Memory] = []
    now = clock.iso(clock.now())
    async with target.db.transaction() as conn:
        for copy, origin in zip(copies, origins, strict=True):
            if await memories.insert(conn, copy):
                stored.append(copy)
                await memories.audit(
                    conn, ts=now, tenant=copy.tenant_id, actor=actor, op=op, target=copy.id,
                    metadata={"from": origin},
                )  # fmt: skip
    target.written(stored)
    return stored


def auto_share_score(memory: Memory, min_score: float, names: Iterable[str]) -> float | None:
    """The memory's transfer score when `share --auto` (and sleep's phase 12) would share it, whatever
    the global store holds already; else None. `names` are its project's (locality.project_names)."""
    # The score is cheap and rules out most rows; eligibility runs the secret detector.
    score = rules.transfer_score(memory)
    return score if score >= min_score and rules.auto_share_eligible(memory, names) else None


async def names_of(store: SqliteStore) -> frozenset[str]:
    """The names of a project store's folder that an auto-shared lesson must not hold."""
    return await asyncio.to_thread(project_names, os.path.dirname(store.root))


@dataclass(frozen=True, slots=True)
class AutoShared:
    """One memory auto-share chose: its transfer score and, unless a dry run, the copy's id."""

    memory: Memory
    score: float
    copy_id: str | None


async def auto_share(
    project: SqliteStore,
    global_store: SqliteStore | None,
    rows: Sequence[Memory],
    *,
    min_score: float,
    dry_run: bool,
) -> list[AutoShared]:
    """Phase 12 / `share --auto`: copy eligible rows scoring >= min_score, each with source
    `auto-shared:<project>:<iso>` and its project as origin_project.

    `global_store` None stands for a global store not created yet (a dry run must not create it).
    """
    now = clock.iso(clock.now())
    names = await names_of(project)
    chosen: list[tuple[Memory, float]] = []
    copies: list[Memory] = []
    keys: dict[str, dict[str, str]] = {}
    rejected: dict[str, set[str]] = {}
    for memory in rows:
        score = auto_share_score(memory, min_score, names)
        if score is None:
            continue
        tenant = memory.tenant_id
        if tenant not in keys:
            keys[tenant] = {} if global_store is None else await share_keys(global_store, tenant)
            rejected[tenant] = (
                set()
                if global_store is None
                else await rejections.all_digests(global_store.db.reader, tenant)
            )
        key = rules.share_key(memory.content)
        if key in keys[tenant] or refused(memory.content, rejected[tenant]):
            continue
        keys[tenant][key] = memory.id
        chosen.append((memory, score))
        copies.append(
            rules.copy_for(
                memory,
                new_id=global_id(),
                source=f"{rules.AUTO_SHARED}{project.project}:{now}",
                now=now,
                origin_project=project.project,
            )
        )
    if dry_run or not copies or global_store is None:
        return [AutoShared(m, s, None) for m, s in chosen]
    stored = {
        c.id
        for c in await copy_in(
            global_store, copies, actor="daemon", op="share", origins=[m.id for m, _ in chosen]
        )
    }
    return [
        AutoShared(m, s, copy.id) for (m, s), copy in zip(chosen, copies, strict=True) if copy.id in stored
    ]
