"""Where each agent tool keeps its notes, and reading them (ingest.md §4). Never writes there.

Under each tool's home (agentnotes/tools.py), for a project root R:

- claude-code: project notes `<home>/projects/<encoded R>/memory/*.md` (YAML front matter required,
  `MEMORY.md` skipped, it is the tool's index). `autoMemoryDirectory` in `<home>/settings.json`:
  a relative path is a project's folder under its root (`R/<dir>/*.md`, project notes); an absolute
  (or `~`) path is one folder shared by every project, so its notes are about the user (global).
- codex: user notes = bullets under the headings User Profile, Preferences, Tips of
  `<home>/memories/memory_summary.md`.
- gemini-cli: user notes = bullets under `## Gemini Added Memories` in `<home>/GEMINI.md`; project
  notes = `<home>/tmp/<sha256 of R>/memory/*.md` (Gemini's per-project folder), read only when
  `experimental.autoMemory` is true in `<home>/settings.json`.
- qwen-code: user notes = bullets under `## Qwen Added Memories` in `<home>/QWEN.md`; project notes
  = `<home>/tmp/<sha256 of R>/memory/*.md` (Qwen keeps Gemini's per-project layout).
- copilot-vscode (home = VS Code's `Code/User`): user notes = the memory tool's files under
  `<home>/globalStorage/github.copilot-chat/memory-tool/memories/` (recursive); project notes = the
  same folder under `<home>/workspaceStorage/<id>/GitHub.copilot-chat/memory-tool/memories/` of the
  workspace whose `workspace.json` folder URI is `file://R`.
- openclaw (home = the workspace): user note = `<home>/MEMORY.md`, one note.

Folder notes are one file per note (front matter, when present, is dropped); bullet files hold one
note per bullet. Every default above is a folder below the home, so `agentMemories.paths.<tool>`
(the home) moves all of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from hippod.agentnotes import parse
from hippod.agentnotes.tools import encode_root

COPILOT_MEMORIES = ("memory-tool", "memories")
_ADDED = {
    "gemini-cli": ("GEMINI.md", "Gemini Added Memories"),
    "qwen-code": ("QWEN.md", "Qwen Added Memories"),
}
CODEX_HEADINGS = {"User Profile", "Preferences", "Tips"}


@dataclass(frozen=True, slots=True)
class Location:
    """A folder of one-file notes, or a file of bullet notes."""

    path: str
    bullets: frozenset[str] = frozenset()  # headings, for a bullet file
    single: bool = False  # one file that is one note
    recursive: bool = False
    front_matter: bool = False  # required (Claude memory files)

    @property
    def is_file(self) -> bool:
        return bool(self.bullets) or self.single

    def holds(self, path: str) -> bool:
        """True when path is this location, inside it, or a folder containing it."""
        return path == self.path or path.startswith(self.path + os.sep) or self.path.startswith(path + os.sep)


@dataclass(frozen=True, slots=True)
class Note:
    tool: str
    key: str
    path: str
    source: str  # agent:<tool>:<path relative to the home>
    text: str  # the body, trimmed


@dataclass
class Scan:
    """What one tool's locations held: notes, locations fully read, and parse-level skips."""

    tool: str
    home: str
    home_exists: bool
    notes: list[Note] = field(default_factory=list)
    found: list[str] = field(default_factory=list)  # locations that exist
    complete: list[Location] = field(default_factory=list)  # read whole: a missing note is deleted
    unreadable: list[str] = field(default_factory=list)
    no_front_matter: int = 0


def _settings(home: str) -> dict[str, object]:
    try:
        with open(os.path.join(home, "settings.json"), encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _claude_auto_dir(home: str) -> str | None:
    value = _settings(home).get("autoMemoryDirectory")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _is_shared(path: str) -> bool:
    return os.path.isabs(path) or path == "~" or path.startswith("~/")


def _project_hash(root: str) -> str:
    return hashlib.sha256(root.encode()).hexdigest()


def _copilot_workspace(home: str, root: str) -> str | None:
    """The workspaceStorage folder of the VS Code workspace opened on root, if any."""
    storage = os.path.join(home, "workspaceStorage")
    try:
        entries = sorted(os.listdir(storage))
    except OSError:
        return None
    for entry in entries:
        try:
            with open(os.path.join(storage, entry, "workspace.json"), encoding="utf-8") as handle:
                folder = json.load(handle).get("folder")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(folder, str) and folder.startswith("file:"):
            path = unquote(urlparse(folder).path).rstrip("/") or "/"
            if os.path.normpath(path) == os.path.normpath(root):
                return os.path.join(storage, entry)
    return None


def project_locations(tool: str, home: str, root: str) -> list[Location]:
    """The locations of a project's notes for one tool (nothing for tools with no project notes)."""
    if tool == "claude-code":
        found = [Location(os.path.join(home, "projects", encode_root(root), "memory"), front_matter=True)]
        auto = _claude_auto_dir(home)
        if auto is not None and not _is_shared(auto):
            found.append(Location(os.path.normpath(os.path.join(root, auto)), front_matter=True))
        return found
    if tool == "gemini-cli":
        experimental = _settings(home).get("experimental")
        if not (isinstance(experimental, dict) and experimental.get("autoMemory") is True):
            return []
        return [Location(os.path.join(home, "tmp", _project_hash(root), "memory"))]
    if tool == "qwen-code":
        return [Location(os.path.join(home, "tmp", _project_hash(root), "memory"))]
    if tool == "copilot-vscode":
        workspace = _copilot_workspace(home, root)
        if workspace is None:
            return []
        return [Location(os.path.join(workspace, "GitHub.copilot-chat", *COPILOT_MEMORIES), recursive=True)]
    return []


def user_locations(tool: str, home: str) -> list[Location]:
    """The locations of a tool's notes about the user (global store)."""
    if tool == "claude-code":
        auto = _claude_auto_dir(home)
        if auto is not None and _is_shared(auto):
            folder = os.path.expanduser(auto) if auto.startswith("~") else auto
            return [Location(os.path.normpath(folder), front_matter=True)]
        return []
    if tool == "codex":
        summary = os.path.join(home, "memories", "memory_summary.md")
        return [Location(summary, bullets=frozenset(CODEX_HEADINGS))]
    if tool in _ADDED:
        name, heading = _ADDED[tool]
        return [Location(os.path.join(home, name), bullets=frozenset({heading}))]
    if tool == "copilot-vscode":
        folder = os.path.join(home, "globalStorage", "github.copilot-chat", *COPILOT_MEMORIES)
        return [Location(folder, recursive=True)]
    if tool == "openclaw":
        return [Location(os.path.join(home, "MEMORY.md"), single=True)]
    return []


def watch_roots(tool: str, home: str, project_roots: list[str]) -> list[str]:
    """The folders to watch for one tool (daemon.md §11.2), existing or not."""
    if tool == "claude-code":
        roots = [os.path.join(home, "projects")]
        auto = _claude_auto_dir(home)
        if auto is not None and _is_shared(auto):
            roots += [loc.path for loc in user_locations(tool, home)]
        elif auto is not None:
            roots += [os.path.normpath(os.path.join(root, auto)) for root in project_roots]
        return roots
    if tool == "codex":
        return [os.path.join(home, "memories")]
    if tool == "copilot-vscode":
        return [
            os.path.join(home, "globalStorage", "github.copilot-chat", COPILOT_MEMORIES[0]),
            os.path.join(home, "workspaceStorage"),
        ]
    return [home]


def _note(tool: str, home: str, path: str, text: str, key: str | None = None) -> Note:
    relative = os.path.relpath(path, home) if path.startswith(home + os.sep) else path
    return Note(tool, key or path, path, f"agent:{tool}:{relative}", text.strip())


def _bullet_key(path: str, text: str) -> str:
    return f"{path}#{hashlib.sha256(' '.join(text.split()).encode()).hexdigest()[:16]}"


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _folder_files(location: Location) -> list[str]:
    """The .md files of a folder location, sorted; raises OSError when it cannot be listed."""
    if not location.recursive:
        names = sorted(os.listdir(location.path))
        return [os.path.join(location.path, n) for n in names if n.endswith(".md")]
    files: list[str] = []

    def fail(exc: OSError) -> None:
        raise exc

    for folder, dirs, names in os.walk(location.path, onerror=fail):
        dirs.sort()
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return files


def read_locations(tool: str, home: str, locations: list[Location]) -> Scan:
    """Read every location of one tool. A location is `complete` (its missing notes count as deleted)
    only when the tool's home and the location's folder exist and nothing in it failed to read."""
    scan = Scan(tool, home, os.path.isdir(home))
    for location in locations:
        notes: list[Note] = []
        try:
            if location.is_file:
                if not os.path.isfile(location.path):
                    raise FileNotFoundError(location.path)
                scan.found.append(location.path)
                text = _read(location.path)
                if location.bullets:
                    seen: set[str] = set()
                    for bullet in parse.bullets_under(text, set(location.bullets)):
                        key = _bullet_key(location.path, bullet)
                        if key not in seen:
                            seen.add(key)
                            notes.append(_note(tool, home, location.path, bullet, key))
                else:
                    notes.append(_note(tool, home, location.path, parse.body_of(text)))
            else:
                files = _folder_files(location)
                scan.found.append(location.path)
                for path in files:
                    if location.front_matter and os.path.basename(path) == "MEMORY.md":
                        continue
                    try:
                        has_front, body = parse.split_front_matter(_read(path))
                    except FileNotFoundError:
                        continue  # deleted since the listing: gone, like any missing note
                    if location.front_matter and not has_front:
                        scan.no_front_matter += 1
                        continue
                    notes.append(_note(tool, home, path, body))
        except FileNotFoundError:
            # A note is gone only while its folder is still readable (ingest.md §4): a folder
            # removed whole (a project deleted, a disk unmounted) changes nothing, like a missing home.
            folder = os.path.dirname(location.path) if location.is_file else location.path
            if not os.path.isdir(folder):
                continue
            notes = []
        except OSError:
            scan.unreadable.append(location.path)
            continue
        scan.notes += notes
        if scan.home_exists:
            scan.complete.append(location)
    return scan
