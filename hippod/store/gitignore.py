"""`.hippo/.gitignore` of a project store: what stays on this machine when the project is committed.

The markdown mirrors (`episodic/`, `semantic/`, `trace/`, `dormant/`, `conflicts/`) and `config.json`
are meant to be committed, as the original's are. The database with its `-wal`/`-shm`/`-journal`,
`stats.json` (this machine's counters, rewritten on every recall), the session buffer (`buffer/`:
this machine's active task and session events), `backups/` and temporary files are not.

hippod writes the file when it is missing and never changes one that exists, so a user's edits
stand. A store being opened gets it once (stores made before it existed included); the store then
notes it wrote one, so a file the user deleted is not put back, except by `init`, which a user runs
to set the store up.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from hippod.store.sqlite import memories

if TYPE_CHECKING:
    from hippod.store.store import SqliteStore

log = logging.getLogger("hippod.gitignore")

NAME = ".gitignore"
META_KEY = "gitignore_written"
TEXT = """\
# Written by hippod. This machine's files stay out of git; the markdown mirrors and config.json
# are meant to be committed. hippod never changes this file once it exists: edit it as you like.
hippo.db
hippo.db-*
stats.json
buffer/
backups/
*.tmp
"""


def _create(path: str) -> bool:
    """Write the file unless one exists (never replacing it, even one made meanwhile); True if written."""
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(TEXT)
    try:
        os.link(temp, path)  # fails when the file exists: a user's file is never replaced
    except FileExistsError:
        return False
    except OSError:
        # No hard links on this filesystem: an exclusive create instead.
        try:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(TEXT)
        except FileExistsError:
            return False
    finally:
        os.unlink(temp)
    return True


async def ensure(store: SqliteStore, *, restore: bool = False) -> bool:
    """Write the project store's .gitignore when it is missing and was never written, or when it is
    missing and `restore` (init) asks for it; True when it was written. A failure is only logged."""
    path = os.path.join(store.root, NAME)
    if store.kind != "project" or os.path.lexists(path):
        return False
    if not restore and await memories.get_meta(store.db.reader, META_KEY) is not None:
        return False
    try:
        written = _create(path)
    except OSError as exc:
        log.warning("could not write %s: %s", path, exc)
        return False
    async with store.db.transaction() as conn:
        await memories.set_meta(conn, META_KEY, "1")
    return written
