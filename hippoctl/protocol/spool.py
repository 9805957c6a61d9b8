"""The spool (ingest.md §8): where a hook verb leaves its request when the daemon cannot answer in time.

The client writes these files and the daemon replays them, so both read this module: the folder,
the file name and the document format. Standard library and msgspec only.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

import msgspec

from hippoctl.protocol.files import write_private
from hippoctl.protocol.paths import APP, home_override

# A spool file is opened as itself, never through a link, and not inherited by child processes.
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

VERSION = 1
# The hook verbs whose requests are worth keeping for later. The per-prompt context hook,
# compact-resume and last-sleep are never spooled: a stale read is useless.
KINDS = ("capture-error", "session-end", "pre-compact", "post-compact")
FAILED = "failed"
SUFFIX = ".json"
ERR_SUFFIX = ".err"
MAX_STDIN_BYTES = 1024 * 1024


class SpoolFile(msgspec.Struct, forbid_unknown_fields=False):
    """One spooled hook request, as written to `<global root>/spool/<kind>/<name>.json`."""

    v: int
    kind: str
    created_at: str
    cwd: str
    env: dict[str, str]
    argv: list[str]
    stdin: Any = None


def global_root() -> str:
    """$HIPPO_HOME, else platformdirs.user_data_dir("hippo", appauthor=False), without platformdirs.

    The daemon's store registry computes the same path with platformdirs; a test holds them together.
    """
    home = home_override()
    if home is not None:
        return home
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
    else:
        base = os.environ.get("XDG_DATA_HOME", "").strip()
        if not base:
            base = os.path.expanduser("~/.local/share")
    return os.path.realpath(os.path.join(base, APP))


def spool_root(root: str | None = None) -> str:
    """`<global root>/spool`."""
    return os.path.join(global_root() if root is None else root, "spool")


def new_name(now: float | None = None, pid: int | None = None) -> str:
    """`<UTC yyyymmddThhmmssfff>-<pid>-<4 hex>.json`: names sort oldest first."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f"{moment.microsecond // 1000:03d}"
    return f"{stamp}-{os.getpid() if pid is None else pid}-{os.urandom(2).hex()}{SUFFIX}"


def key_of(name: str) -> str:
    """The request key a spool file name stands for (the name without `.json`).

    A live hook request carries the key of the file it would be spooled as, and the daemon records
    each key it applies, so a request is applied once however it arrives.
    """
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def _private_dirs(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    # makedirs' mode is filtered by the umask; the spool holds hook payloads, so make sure.
    os.chmod(path, 0o700)
    os.chmod(os.path.dirname(path), 0o700)


def write(root: str, name: str, document: SpoolFile) -> str:
    """Write one spool file atomically (temp file, fsync, rename); returns its path."""
    folder = os.path.join(spool_root(root), document.kind)
    _private_dirs(folder)
    path = os.path.join(folder, name)
    # A leading dot and no .json suffix: the daemon never picks up a half-written file.
    write_private(path, msgspec.json.encode(document), os.path.join(folder, f".{name}.tmp"))
    return path


def write_failed(root: str, name: str, document: SpoolFile, reason: str) -> str:
    """Put a request that can never be applied straight into `failed/`, its `.err` note first, so
    the person reading `daemon status` finds why; returns the file's path."""
    folder = os.path.join(spool_root(root), FAILED)
    _private_dirs(folder)
    stem = key_of(name)
    note = f"{document.created_at} not replayable: {reason}\n".encode()
    write_private(os.path.join(folder, stem + ERR_SUFFIX), note, os.path.join(folder, f".{stem}.err.tmp"))
    path = os.path.join(folder, name)
    write_private(path, msgspec.json.encode(document), os.path.join(folder, f".{name}.tmp"))
    return path


def read(path: str) -> SpoolFile:
    """Parse one spool file; raises ValueError naming the problem when it is not a usable one."""
    try:
        # Never through a link: a spool file is read as itself or not at all.
        with open(os.open(path, _READ), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        if os.path.islink(path):
            raise ValueError("cannot read: it is a symbolic link") from None
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    try:
        document = msgspec.json.decode(data, type=SpoolFile)
    except msgspec.ValidationError as exc:
        raise ValueError(f"not a spool file: {exc}") from None
    except msgspec.DecodeError:
        raise ValueError("not a spool file: not valid JSON") from None
    if document.v != VERSION:
        raise ValueError(f"spool format v{document.v} is not known (this hippod reads v{VERSION})")
    return document


def json_names(folder: str) -> list[str]:
    """The spool file names in one folder (temp files, which start with a dot, left out)."""
    try:
        return [n for n in os.listdir(folder) if n.endswith(SUFFIX) and not n.startswith(".")]
    except OSError:
        return []


def count(root: str) -> tuple[int, int]:
    """(pending, failed) spool files under `root`, the spool folder."""
    pending = failed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0, 0
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if entry.name == FAILED:
            failed += len(json_names(entry.path))
        else:
            pending += len(json_names(entry.path))
    return pending, failed
