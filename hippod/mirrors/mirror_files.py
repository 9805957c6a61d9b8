"""Files under a store root that hippod writes for people (mirrors, stats.json), written so that
a link planted in the store folder is never followed.

Every folder below the root is opened with O_NOFOLLOW and every file is reached relative to its
folder's descriptor, so a symbolic link in place of a mirror folder is refused with a named error
and one in place of a mirror file is replaced, never written through. A file is written whole to
a new temporary name (O_EXCL) and renamed over the old one: a reader sees one version or the other.
Mirrors are rebuilt from the database when lost, so they are not synced to disk one by one; inside
`durable()` (a verb that takes a text off the disk before it answers) each file written and each
folder changed is synced before the call returns.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextvars import ContextVar

from hippoctl.protocol.files import replace

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Without descriptor-relative calls (Windows) files are reached by path.
_RELATIVE = (
    {os.open, os.mkdir, os.unlink} <= os.supports_dir_fd and os.scandir in os.supports_fd and bool(_NOFOLLOW)
)
TEMP_SUFFIX = ".tmp"
# Set by durable(); asyncio.to_thread carries it into the worker threads that write.
_DURABLE: ContextVar[bool] = ContextVar("mirror_files_durable", default=False)


@contextlib.contextmanager
def durable() -> Iterator[None]:
    """Inside it, every write, append and removal below reaches the disk before it returns (file
    data and the folder entry), so a crash or power loss right after cannot bring a file back."""
    token = _DURABLE.set(True)
    try:
        yield
    finally:
        _DURABLE.reset(token)


class LinkRefused(OSError):
    """A mirror folder is a symbolic link (or not a folder): nothing is written through it."""


def describe(relative: str, exc: OSError) -> str:
    """One line naming a file that could not be written and why."""
    return str(exc) if isinstance(exc, LinkRefused) else f"{relative}: {exc.strerror or type(exc).__name__}"


def _open_folder(root: str, folder: str, *, create: bool) -> int:
    """A descriptor of root/folder, each part below the root opened without following links."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        path = root
        for part in [p for p in folder.split("/") if p]:
            path = os.path.join(path, part)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkRefused(
                        errno.ELOOP, f"refusing to write mirrors through {path}: it is not a plain folder"
                    ) from None
                raise
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


Folder = int | str


def _sync_folder(where: Folder) -> None:
    """Sync a folder's entries to disk inside durable(); a folder that cannot be opened for it
    (Windows) is left to the file system."""
    if not _DURABLE.get():
        return
    if isinstance(where, int):
        os.fsync(where)
        return
    with contextlib.suppress(OSError):
        fd = os.open(where, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def folder(root: str, relative: str, *, create: bool = True) -> Iterator[Folder]:
    """root/relative opened for the calls below (created 0700 when `create`): a descriptor, or
    its path where the platform has no descriptor-relative calls."""
    if not _RELATIVE:
        path = os.path.join(root, relative)
        if create:
            os.makedirs(path, mode=0o700, exist_ok=True)
        elif not os.path.isdir(path):
            raise FileNotFoundError(errno.ENOENT, "no such folder", path)
        yield path
        return
    fd = _open_folder(root, relative, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def _at(where: Folder, name: str) -> tuple[str, int | None]:
    """A name in a folder, as (path, dir_fd) for os calls."""
    return (name, where) if isinstance(where, int) else (os.path.join(where, name), None)


def write_in(where: Folder, name: str, text: str) -> None:
    """Replace the file `name` in the folder with text (a link there is replaced, not followed)."""
    temp, fd = _at(where, f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    target, _ = _at(where, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    handle = os.open(temp, flags, 0o600, dir_fd=fd)
    try:
        try:
            data = memoryview(text.encode("utf-8"))
            while data:
                data = data[os.write(handle, data) :]
            if _DURABLE.get():
                os.fsync(handle)
        finally:
            os.close(handle)
        replace(temp, target, src_dir_fd=fd, dst_dir_fd=fd)
        _sync_folder(where)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=fd)
        raise


def append_in(where: Folder, name: str, text: str, size: int) -> int | None:
    """Append text to the regular file `name` in the folder when it is `size` bytes long now; its
    new size, or None when it is missing, is a link or anything but a regular file, or has another
    size (someone else changed it: the caller rewrites it whole)."""
    path, fd = _at(where, name)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.EISDIR):
            return None
        raise
    try:
        st = os.fstat(handle)
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return None
        data = memoryview(text.encode("utf-8"))
        size += len(data)
        while data:
            data = data[os.write(handle, data) :]
        if _DURABLE.get():
            os.fsync(handle)
    finally:
        os.close(handle)
    return size


def read_in(where: Folder, name: str) -> str | None:
    """The text of the regular file `name` in the folder; None when it is missing, is a link or
    anything but a regular file, or is not UTF-8."""
    path, fd = _at(where, name)
    try:
        handle = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            return None
        try:
            return source.read().decode("utf-8")
        except UnicodeDecodeError:
            return None


def remove_in(where: Folder, name: str, *, folder: bool = False) -> bool:
    """Remove `name` from the folder (a link itself, never its target), or with `folder` the
    subfolder `name` when it is empty; whether it went."""
    path, fd = _at(where, name)
    try:
        if folder:
            os.rmdir(path, dir_fd=fd)
        else:
            os.unlink(path, dir_fd=fd)
    except FileNotFoundError:
        return False
    except OSError:
        if not folder:
            raise
        return False  # not empty
    _sync_folder(where)
    return True


def entries_in(where: Folder) -> list[tuple[str, bool]]:
    """(name, is a plain file) for each entry of the folder but its subfolders."""
    with os.scandir(where) as entries:
        return [
            (entry.name, entry.is_file(follow_symlinks=False))
            for entry in entries
            if not entry.is_dir(follow_symlinks=False)
        ]


def folders_in(where: Folder) -> list[str]:
    """The names of the folder's plain subfolders (links to folders are not listed)."""
    with os.scandir(where) as entries:
        return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]


def write(root: str, relative: str, text: str) -> None:
    """Replace root/relative with text, creating its folders, unless it holds that text already."""
    with Folders(root) as folders:
        folders.write(relative, text)


def remove(root: str, relative: str) -> bool:
    """Remove root/relative when it is there; a missing or linked folder means nothing to remove."""
    with Folders(root) as folders:
        return folders.remove(relative)


class Folders:
    """The folders of one pass of writes under a root, each opened once for the whole pass.

    Opening a folder walks it from the root without following links (a few system calls per part);
    a pass that writes hundreds of mirrors into the same four folders opens each of them once.
    Only folders that opened are kept: a missing or refused one is tried again at its next use.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._open: dict[str, Folder] = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Folders:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _folder(self, relative: str, *, create: bool) -> Folder:
        where = self._open.get(relative)
        if where is None:
            where = self._stack.enter_context(folder(self.root, relative, create=create))
            self._open[relative] = where
        return where

    def write(self, relative: str, text: str) -> bool:
        """Replace root/relative with text, creating its folders, unless it holds that text already
        (a committed mirror keeps its file untouched); whether it wrote."""
        parent, name = os.path.split(relative)
        where = self._folder(parent, create=True)
        if read_in(where, name) == text:
            return False
        write_in(where, name, text)
        return True

    def remove(self, relative: str) -> bool:
        """Remove root/relative when it is there; a missing or linked folder means nothing to remove."""
        parent, name = os.path.split(relative)
        try:
            where = self._folder(parent, create=False)
        except (FileNotFoundError, LinkRefused):
            return False
        return remove_in(where, name)
