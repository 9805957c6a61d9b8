"""Arguments of `backup` and `restore`: a copy of a store's database, and putting one back. Paths are
made absolute here, against the directory the request acts from."""

from __future__ import annotations

import argparse

from hippoctl.args.ingest import absolute
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m


def add_verbs(verb: AddVerb) -> None:
    """Register `backup` and `restore` on the hippoctl parser."""
    p = verb(
        "backup",
        "copy the store's database while the daemon runs (default: into the store's backups/ folder)",
        "hippoctl backup",
        "hippoctl backup ~/hippo-backups/ --global",
        "hippoctl backup /mnt/usb/project.db --json",
    )
    p.add_argument(
        "dest",
        nargs="?",
        help="a file to create (never overwritten), or a folder to put hippo-<date>T<time>.db in",
    )

    p = verb(
        "restore",
        "replace the project store (or --global) with a backup; the store as it was is kept",
        "hippoctl restore .hippo/backups/hippo-20260103T101500.db",
        "hippoctl restore ~/hippo-backups/hippo-20260103T101500.db --global",
    )
    p.add_argument("file", help="the backup: a file `hippoctl backup` wrote, or any copy of a hippo.db")


def _backup(args: argparse.Namespace) -> m.Body:
    return m.Backup(path=None if args.dest is None else absolute(args, args.dest, "the backup's destination"))


def _restore(args: argparse.Namespace) -> m.Body:
    return m.Restore(path=absolute(args, args.file, "the backup file"))


BUILDERS: dict[str, Builder] = {"backup": _backup, "restore": _restore}

register("backup", add_verbs, BUILDERS)
