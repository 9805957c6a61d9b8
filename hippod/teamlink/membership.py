"""`team.json` in the global store's folder: the team server this user's hippod shares with, and the
key it uses. Private to the user (0600), like the store itself."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippod.base.jsonfile import read_object, write_object

if TYPE_CHECKING:
    from hippod.store.stores import StoreRegistry

FILE = "team.json"


@dataclass(frozen=True)
class Membership:
    url: str
    key: str
    joined_at: str


def path(global_root: str) -> str:
    return os.path.join(global_root, FILE)


def read(global_root: str) -> Membership | None:
    """The membership, or None when not joined (or the file is not a membership)."""
    if not os.path.exists(path(global_root)):
        return None
    found, problem = read_object(path(global_root))
    url, key, joined = found.get("url"), found.get("key"), found.get("joinedAt")
    if problem is not None or not isinstance(url, str) or not isinstance(key, str):
        return None
    return Membership(url, key, joined if isinstance(joined, str) else "")


def in_team(registry: StoreRegistry) -> bool:
    """Whether this hippod is a member of a team (a team server is not: it is the team)."""
    return registry.team is None and read(registry.global_root) is not None


def write(global_root: str, membership: Membership) -> None:
    write_object(
        path(global_root), {"url": membership.url, "key": membership.key, "joinedAt": membership.joined_at}
    )


def remove(global_root: str) -> bool:
    try:
        os.unlink(path(global_root))
    except FileNotFoundError:
        return False
    return True
