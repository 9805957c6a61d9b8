"""Typed reply data of `backup` and `restore`. See replies.py for the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class BackupReply(Reply):
    store: str  # the store's folder
    path: str  # the backup written
    bytes: int
    memories: int  # memory rows in the copy, every tenant


class RestoreReply(Reply):
    store: str
    source: str  # the backup restored from
    memories: int  # memory rows in the store now, every tenant
    schema: int  # the restored store's schema once migrated
    from_schema: int  # the backup's schema before migrating
    kept: str  # where the store as it was before the restore is kept
