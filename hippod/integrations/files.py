"""Writing other programs' files: atomically, with a one-time backup of the original."""

from __future__ import annotations

import os
import shutil
import stat
import threading

from hippoctl.protocol.files import write_private
from hippod.errors import HippoError
from hippod.integrations.report import Report

BACKUP_SUFFIX = ".hippo-bak"


class Unreadable(Exception):
    """A file that is there but is not UTF-8 text hippod can read (or not a file at all); whoever
    meets one leaves it exactly as it is."""


def read_text(path: str) -> str | None:
    """The file's text with its line endings as stored (a CRLF file is written back as CRLF), or
    None when it does not exist; Unreadable when it cannot be read as UTF-8 text."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise Unreadable(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise Unreadable(f"{path} cannot be read ({exc.strerror or exc})") from None


def read_or_warn(path: str, report: Report) -> str | None:
    """read_text(), or None with a warning for a file that cannot be read, which is left alone."""
    try:
        return read_text(path)
    except Unreadable as exc:
        report.warnings.append(f"{exc}; left alone")
        return None


def backup_once(path: str) -> str | None:
    """Copy `path` to `<path>.hippo-bak` unless that copy already exists; returns the backup's path.

    The first copy is the user's own file from before hippod touched it, so it is never replaced.
    """
    backup = path + BACKUP_SUFFIX
    if not os.path.exists(path) or os.path.exists(backup):
        return None
    shutil.copy2(path, backup)
    return backup


def write_atomic(path: str, text: str | bytes, *, mode: int | None = None, backup: bool = True) -> None:
    """Replace `path` with `text`: a reader sees the old file or the new one, never a half-written one.

    Text is written as UTF-8; bytes as they are (e.g. a UTF-16 file). An existing file keeps its
    permission bits (unless `mode` is given) and gets its one-time backup first. Parent folders are
    created as needed. A symbolic link is written through, so it stays a link (a settings.json kept
    in a dotfiles repository, an AGENTS.md that links to CLAUDE.md).
    """
    path = os.path.realpath(path)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    try:
        old_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        old_mode = None
    if backup and old_mode is not None:
        backup_once(path)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{threading.get_ident()}.tmp")
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    write_private(path, data, temp, mode=mode if mode is not None else old_mode)


def remove(path: str) -> bool:
    """Delete `path` (backing it up first, once); False when it was not there."""
    if not os.path.exists(path):
        return False
    backup_once(path)
    os.unlink(path)
    return True


def write_failed(exc: OSError) -> HippoError:
    """The one-line error for a file that could not be written (exit 1)."""
    where = f" {exc.filename}" if exc.filename else ""
    return HippoError("write_failed", f"could not write{where}: {exc.strerror or exc}")
