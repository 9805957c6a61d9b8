"""Request bodies of `backup` and `restore`: a copy of a store's database, and putting one back;
part of messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body


class Backup(Body):
    """`backup [<dest>]`: the target store's database copied with SQLite's online backup."""

    path: str | None = None  # absolute: a file to create, or a folder for the default name; None: backups/


class Restore(Body):
    """`restore <file>`: the project store above cwd (or, with --global, the global store) made a copy
    of the backup in `path`."""

    path: str  # absolute


# Every request body of this family, for messages.RequestBody.
BODIES = Backup | Restore
