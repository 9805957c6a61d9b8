"""Writing other programs' files: atomically, with a one-time backup of the original.

Backups are kept out of the user's repositories: in the project store's `backups/` folder for a file
inside a project that has a store, else in the global store's `backups/`, each with an `index.json`
naming the file every backup belongs to.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import threading

from hippoctl.protocol.files import write_private
from hippod.base.errors import HippoError
from hippod.integrations.report import Report

# Older versions kept the backup beside the file, where it littered the repository; one found
# there is moved into the backups folder the next time hippod writes the file.
LEGACY_SUFFIX = ".hippo-bak"
BACKUPS_DIR = "backups"
INDEX_NAME = "index.json"


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


def _global_root(global_root: str | None) -> str:
    if global_root is not None:
        return global_root
    from hippod.store.roots import global_root as default_root

    return default_root()


def backups_folder(path: str, global_root: str | None = None) -> tuple[str, str]:
    """(the folder that keeps `path`'s backup, the backup's name inside it).

    A file inside a project with a store is kept in that store's `backups/` under its path from the
    project (`.hippo/backups/CLAUDE.md`); any other file in the global store's `backups/`, under
    `home/` and its path from the home folder, else under `abs/` and its absolute path.
    """
    from hippod.store.roots import find_project_root

    root = os.path.realpath(_global_root(global_root))
    path = os.path.realpath(path)
    store = find_project_root(os.path.dirname(path), root)
    if store is not None:
        return os.path.join(store, BACKUPS_DIR), os.path.relpath(path, os.path.dirname(store))
    home = os.path.realpath(os.path.expanduser("~"))
    if path.startswith(home + os.sep):
        return os.path.join(root, BACKUPS_DIR), os.path.join("home", os.path.relpath(path, home))
    drive, rest = os.path.splitdrive(path)
    return os.path.join(root, BACKUPS_DIR), os.path.join("abs", drive.strip(":\\/"), rest.lstrip("\\/"))


def backup_path(path: str, global_root: str | None = None) -> str:
    """Where `path`'s one-time backup is (or would be) kept."""
    folder, name = backups_folder(path, global_root)
    return os.path.join(folder, name)


# One lock for every change to an index.json: handlers run concurrently in one process.
_INDEX_LOCK = threading.Lock()


def _change_index(folder: str, name: str, original: str | None) -> None:
    """Note in the folder's index.json which file the backup `name` belongs to (None: forget it), for
    whoever looks for it; an index left empty goes, and so does the folder once it is empty."""
    index_path = os.path.join(folder, INDEX_NAME)
    key = name.replace(os.sep, "/")
    with _INDEX_LOCK:
        try:
            with open(index_path, encoding="utf-8") as handle:
                entries = json.load(handle)
        except (OSError, ValueError):
            entries = {}
        if not isinstance(entries, dict):
            entries = {}
        if original is None:
            if entries.pop(key, None) is None:
                return
        else:
            entries[key] = original
        if not entries:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index_path)
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only when nothing else is in it
            return
        text = json.dumps(dict(sorted(entries.items())), indent=2, ensure_ascii=False) + "\n"
        temp = f"{index_path}.{os.getpid()}.{threading.get_ident()}.tmp"
        write_private(index_path, text.encode("utf-8"), temp, mode=0o600)


def backup_once(path: str, global_root: str | None = None) -> str | None:
    """Copy `path` into its backups folder unless a backup of it is already there; returns the new
    backup's path.

    The first copy is the user's own file from before hippod touched it, so it is never replaced. A
    backup an older version left beside the file (`<file>.hippo-bak`) is that first copy: it is
    moved into the backups folder instead.
    """
    path = os.path.realpath(path)
    folder, name = backups_folder(path, global_root)
    backup = os.path.join(folder, name)
    legacy = path + LEGACY_SUFFIX
    if os.path.lexists(backup):
        return None
    if not os.path.isfile(legacy) and not os.path.exists(path):
        return None
    os.makedirs(os.path.dirname(backup), mode=0o700, exist_ok=True)
    if os.path.isfile(legacy):
        shutil.move(legacy, backup)
    else:
        shutil.copy2(path, backup)
    _change_index(folder, name, path)
    return backup


def existing_backup(path: str, global_root: str | None = None) -> str | None:
    """`path`'s backup when it has one (one an older version left beside the file is moved into the
    backups folder first), else None."""
    backup = backup_path(path, global_root)
    if os.path.lexists(backup):
        return backup
    if os.path.isfile(os.path.realpath(path) + LEGACY_SUFFIX):
        return backup_once(path, global_root)
    return None


def forget_backup(path: str, global_root: str | None = None) -> None:
    """Delete `path`'s backup (once what it kept is back in place, or it kept nothing of the user's),
    and the folders it leaves empty inside the backups folder."""
    folder, name = backups_folder(path, global_root)
    backup = os.path.join(folder, name)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(backup)
    parent = os.path.dirname(backup)
    while parent != folder and parent.startswith(folder + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)
    _change_index(folder, name, None)


def write_atomic(
    path: str,
    text: str | bytes,
    *,
    mode: int | None = None,
    backup: bool = True,
    global_root: str | None = None,
) -> None:
    """Replace `path` with `text`: a reader sees the old file or the new one, never a half-written one.

    Text is written as UTF-8; bytes as they are (e.g. a UTF-16 file). An existing file keeps its
    permission bits (unless `mode` is given) and gets its one-time backup first (backup_once, in the
    backups folder of `global_root`'s store or of the project's store). Parent folders are
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
        backup_once(path, global_root)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{threading.get_ident()}.tmp")
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    write_private(path, data, temp, mode=mode if mode is not None else old_mode)


def remove(path: str, global_root: str | None = None) -> bool:
    """Delete `path` (backing it up first, once); False when it was not there."""
    if not os.path.exists(path):
        return False
    backup_once(path, global_root)
    os.unlink(path)
    return True


def write_failed(exc: OSError) -> HippoError:
    """The one-line error for a file that could not be written (exit 1)."""
    where = f" {exc.filename}" if exc.filename else ""
    return HippoError("write_failed", f"could not write{where}: {exc.strerror or exc}")
