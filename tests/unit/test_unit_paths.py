"""Instance key, socket, runtime and log paths (daemon.md §2)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from hippoctl.protocol import paths

posix_only = pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG rules apply to Linux/BSD")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HIPPO_HOME", "HIPPO_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def short_private_dir() -> Iterator[str]:
    """A fresh 0700 directory with a short path (tmp_path can be too long for a socket)."""
    base = "/tmp" if os.path.isdir("/tmp") else None
    path = tempfile.mkdtemp(prefix="hu-", dir=base)
    os.chmod(path, 0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_instance_key_default_without_home(clean_env: pytest.MonkeyPatch) -> None:
    assert paths.instance_key() == "default"
    clean_env.setenv("HIPPO_HOME", "   ")
    assert paths.instance_key() == "default"


def test_instance_key_hashes_realpath_of_home(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    link = tmp_path / "link-home"
    link.symlink_to(real)
    expected = hashlib.sha256(os.path.realpath(real).encode()).hexdigest()[:12]
    clean_env.setenv("HIPPO_HOME", str(real))
    assert paths.instance_key() == expected
    clean_env.setenv("HIPPO_HOME", str(link))
    assert paths.instance_key() == expected
    assert len(expected) == 12
    assert int(expected, 16) >= 0
    clean_env.setenv("HIPPO_HOME", str(tmp_path / "another"))
    assert paths.instance_key() != expected


def test_socket_path_honours_hippo_socket(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = tmp_path / "custom.sock"
    clean_env.setenv("HIPPO_SOCKET", str(target))
    clean_env.setenv("HIPPO_HOME", str(tmp_path))
    assert paths.socket_path() == str(target)
    assert paths.lock_path(paths.socket_path()) == str(target) + ".lock"


@posix_only
def test_runtime_base_matches_platformdirs(clean_env: pytest.MonkeyPatch, short_private_dir: str) -> None:
    clean_env.setenv("XDG_RUNTIME_DIR", short_private_dir)
    assert paths.runtime_base() == platformdirs.user_runtime_dir("hippo")
    assert paths.runtime_base() == os.path.join(short_private_dir, "hippo")


@posix_only
def test_socket_path_in_runtime_dir(clean_env: pytest.MonkeyPatch, short_private_dir: str) -> None:
    clean_env.setenv("XDG_RUNTIME_DIR", short_private_dir)
    assert paths.socket_path() == os.path.join(short_private_dir, "hippo", "hippod.sock")
    clean_env.setenv("HIPPO_HOME", short_private_dir)
    key = hashlib.sha256(os.path.realpath(short_private_dir).encode()).hexdigest()[:12]
    assert paths.socket_path() == os.path.join(short_private_dir, "hippo", f"hippod-{key}.sock")


@posix_only
def test_group_readable_runtime_dir_is_not_used(
    clean_env: pytest.MonkeyPatch, short_private_dir: str
) -> None:
    os.chmod(short_private_dir, 0o755)
    clean_env.setenv("XDG_RUNTIME_DIR", short_private_dir)
    assert not paths.runtime_base().startswith(short_private_dir)


@posix_only
def test_long_runtime_dir_falls_back_to_tmp(clean_env: pytest.MonkeyPatch) -> None:
    long_dir = tempfile.mkdtemp(prefix="h" * 100, dir="/tmp")
    try:
        os.chmod(long_dir, 0o700)
        clean_env.setenv("XDG_RUNTIME_DIR", long_dir)
        assert len(os.path.join(long_dir, "hippo", "hippod.sock").encode()) > 100
        assert paths.socket_path() == f"/tmp/hippo-{os.getuid()}/hippod.sock"
    finally:
        shutil.rmtree(long_dir, ignore_errors=True)


@posix_only
def test_log_dir_matches_platformdirs(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert paths.log_dir() == platformdirs.user_log_dir("hippo")
    assert paths.log_dir() == str(tmp_path / "state" / "hippo" / "log")


def test_log_dir_of_a_keyed_instance_is_inside_its_home(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("HIPPO_HOME", str(tmp_path))
    assert paths.log_dir() == os.path.join(os.path.realpath(tmp_path), "logs")
