"""Whether a memory's text is tied to its project, for auto-share (sleep.md §8): a lesson reaches
other projects only when it names nothing of its own.

A text is tied when it says "this repo" or the like, holds a file path, or names the project: its
folder, a package name from its manifests, or a top-level file or folder of it that is not one of the
names most repositories share (`src`, `tests`, `README.md`, `package.json`, ...).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterable

# "this repo", "our codebase", "this project": the project the memory was made in.
_PHRASE = re.compile(
    r"\b(?:this|our)\s+(?:repo|repos|repository|codebase|code\s+base|monorepo|checkout|project|app"
    r"|application|service|package|workspace)\b",
    re.IGNORECASE,
)
# A file path: absolute or home- or dot-relative (/etc/x, ~/x, ./x, ../x), two slashes or more
# (a/b/c), a folder and a file with an extension (web/app.ts), or a Windows path (C:\x, a\b).
# `and/or`, `TCP/IP` and `CI/CD` are not paths.
_PATH = re.compile(
    r"(?:^|(?<=[\s`'\"(\[<=:,]))(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*"
    r"|[\w.@+-]+/[\w.@+-]+/[\w.@+/-]*"
    r"|[\w@+-][\w.@+-]*/[\w@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}\b"
    r"|\b[A-Za-z]:\\"
    r"|[\w.-]+\\[\w.-]+"
)
# Top-level names most repositories have: naming one says nothing of which project a text is from.
COMMON_NAMES = frozenset(
    """src lib libs test tests spec specs doc docs bin build dist out target scripts script tools
    examples example assets static public vendor node_modules config configs app apps packages pkg
    cmd internal include tmp web api server client site data
    readme readme.md readme.rst readme.txt license license.md license.txt licence changelog.md
    contributing.md code_of_conduct.md security.md notice authors makefile dockerfile justfile
    docker-compose.yml docker-compose.yaml compose.yml compose.yaml procfile package.json
    package-lock.json pnpm-lock.yaml pnpm-workspace.yaml yarn.lock bun.lockb tsconfig.json
    jsconfig.json pyproject.toml setup.py setup.cfg requirements.txt requirements-dev.txt pipfile
    pipfile.lock poetry.lock uv.lock tox.ini noxfile.py cargo.toml cargo.lock go.mod go.sum gemfile
    gemfile.lock claude.md agents.md gemini.md opencode.json mkdocs.yml""".split()
)
MIN_NAME = 3  # shorter names match too much ordinary text


def tie(text: str, names: Iterable[str]) -> str | None:
    """What ties `text` to its project (a phrase, a path or one of `names`, as found), or None."""
    for pattern in (_PHRASE, _PATH):
        found = pattern.search(text)
        if found is not None:
            return found.group(0)
    lowered = text.lower()
    for name in sorted(set(names), key=lambda n: (-len(n), n)):
        if re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", lowered):
            return name
    return None


def project_names(folder: str) -> frozenset[str]:
    """The names of a project folder a lesson must not hold to reach other projects: the folder's
    own name, the package names of its package.json, pyproject.toml, Cargo.toml and go.mod, and its
    top-level entries but hidden ones and COMMON_NAMES. Unreadable files add nothing."""
    names = {os.path.basename(os.path.normpath(folder))}
    names.update(_package_names(folder))
    try:
        entries = os.listdir(folder)
    except OSError:
        entries = []
    names.update(e for e in entries if not e.startswith(".") and e.lower() not in COMMON_NAMES)
    return frozenset(n for n in names if len(n) >= MIN_NAME)


def _package_names(folder: str) -> set[str]:
    found: set[str] = set()
    package = _read(os.path.join(folder, "package.json"))
    if package is not None:
        try:
            name = json.loads(package).get("name")
        except (ValueError, AttributeError):
            name = None
        if isinstance(name, str):
            found.update({name, name.rpartition("/")[2]})  # "@acme/shop" is also "shop"
    manifests = (("pyproject.toml", (("project",), ("tool", "poetry"))), ("Cargo.toml", (("package",),)))
    for manifest, tables in manifests:
        text = _read(os.path.join(folder, manifest))
        if text is None:
            continue
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        for path in tables:
            table: object = document
            for key in path:
                table = table.get(key) if isinstance(table, dict) else None
            name = table.get("name") if isinstance(table, dict) else None
            if isinstance(name, str):
                found.add(name)
    gomod = _read(os.path.join(folder, "go.mod"))
    module = re.search(r"^module\s+(\S+)", gomod or "", re.MULTILINE)
    if module is not None:
        found.update({module.group(1), module.group(1).rpartition("/")[2]})
    return found


def _read(path: str) -> str | None:
    """A small manifest's text; None when it is missing, unreadable or not text."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(1 << 20)
    except (OSError, UnicodeDecodeError):
        return None
