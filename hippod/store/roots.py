"""Where stores live: the home (the global store's folder) and a project's `.hippo/` above a folder."""

from __future__ import annotations

import os

import platformdirs

from hippoctl.protocol.paths import home_override

# A store's database file, in its folder: the file that makes a folder a store.
DB_NAME = "hippo.db"

PROJECT_DIR = ".hippo"


def default_root() -> str:
    """The home without $HIPPO_HOME: the platformdirs user data dir for app "hippo"."""
    return os.path.realpath(platformdirs.user_data_dir("hippo", appauthor=False))


def global_root() -> str:
    """$HIPPO_HOME, else the default home."""
    return home_override() or default_root()


def find_project_root(cwd: str, global_root_path: str) -> str | None:
    """The nearest `.hippo/` holding hippo.db at or above cwd, skipping the global root itself."""
    current = os.path.realpath(cwd)
    while True:
        candidate = os.path.join(current, PROJECT_DIR)
        if (
            os.path.isfile(os.path.join(candidate, DB_NAME))
            and os.path.realpath(candidate) != global_root_path
        ):
            return os.path.realpath(candidate)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
