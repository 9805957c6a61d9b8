"""The socket folder walk and the peer uid (hippoctl.protocol.ownership), on real folders and sockets."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from hippoctl.protocol.ownership import NotOurs, check_folder, peer_uid

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes")


def private(path: Path, mode: int = 0o700) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    return path


def test_a_private_folder_passes(tmp_path: Path) -> None:
    check_folder(str(private(tmp_path / "rt" / "hippo")))
    check_folder(str(private(tmp_path / "readable", 0o755)))


def test_a_sticky_folder_on_the_way_passes_but_not_as_the_socket_folder(tmp_path: Path) -> None:
    shared = private(tmp_path / "tmp", 0o1777)
    check_folder(str(private(shared / "runtime" / "hippo")))
    with pytest.raises(NotOurs, match=rf"^{shared} is writable by other users \(mode 1777, owner "):
        check_folder(str(shared))


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_folder_others_can_write_fails_anywhere_on_the_way(tmp_path: Path, mode: int) -> None:
    open_folder = private(tmp_path / "open", mode)
    inner = private(open_folder / "hippo")
    with pytest.raises(NotOurs, match=rf"^{open_folder} is writable by other users \(mode {mode:o}, owner "):
        check_folder(str(inner))


def test_links_are_walked_as_the_kernel_walks_them(tmp_path: Path) -> None:
    real = private(tmp_path / "real")
    (tmp_path / "link").symlink_to("real")
    check_folder(str(tmp_path / "link"))
    # The link leads into an open folder: that folder is what the socket would sit in.
    open_folder = private(tmp_path / "open", 0o777)
    (real / "out").symlink_to(open_folder)
    with pytest.raises(NotOurs, match=rf"^{open_folder} is writable"):
        check_folder(str(tmp_path / "link" / "out"))
    # `..` after a link goes up from where the link led, not from where it sits.
    private(open_folder / "x")
    with pytest.raises(NotOurs, match=rf"^{open_folder} is writable"):
        check_folder(str(real / "out" / "x" / ".."))


def test_a_file_or_a_loop_on_the_way_fails(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotOurs, match="is not a folder"):
        check_folder(str(tmp_path / "file"))
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(NotOurs, match="too many symbolic links"):
        check_folder(str(tmp_path / "a"))


def test_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        check_folder(str(tmp_path / "gone" / "hippo"))
    check_folder(str(tmp_path / "gone" / "hippo"), missing_ok=True)
    open_folder = private(tmp_path / "open", 0o777)
    with pytest.raises(NotOurs):
        check_folder(str(open_folder / "gone"), missing_ok=True)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another uid")
def test_a_folder_another_user_owns_fails(tmp_path: Path) -> None:
    theirs = private(tmp_path / "theirs")
    os.chown(theirs, 65534, 65534)
    with pytest.raises(NotOurs, match=rf"^{theirs} is owned by .*uid 65534.*, not by "):
        check_folder(str(private(theirs / "hippo")))


def test_peer_uid_is_ours_on_a_socket_pair() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_uid(left) in (os.getuid(), None)
        if sys.platform.startswith("linux"):
            assert peer_uid(left) == os.getuid()
