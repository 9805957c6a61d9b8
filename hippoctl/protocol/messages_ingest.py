"""Request bodies of ingestion and of the context block for agents (ingest.md, recall.md §9); part of
messages.RequestBody."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol.body import Body

# --- ingestion (ingest.md) ----------------------------------------------------------------------


IMPORT_FORMATS = ("chatgpt", "claude", "cursor", "markdown", "file", "json")


class Import(Body):
    """`import --<format> <path>`, or `import --agents` (format "agents", no path)."""

    format: str
    path: str | None = None  # absolute: the client resolves it against its cwd
    dry_run: bool = False
    tags: list[str] = []
    force: bool = False  # read the file even when it is unchanged since its last import


class Export(Body):
    on_team = True

    path: str | None = None  # absolute; None sends the document back for stdout
    format: str = "json"  # json or markdown


class Capture(Body):
    source: str  # stdin, file or last-session
    text: str | None = None  # the stdin text, read by the client
    path: str | None = None  # --file, absolute
    transcript: str | None = None  # --transcript, absolute
    dry_run: bool = False


class LearnGit(Body):
    days: int = 7
    repos: list[str] = []  # absolute paths; empty means the cwd's repository


class WatchFailure(Body):
    """Sent by `watch` only when the command failed."""

    command: str
    exit_code: int
    output: str  # the command's stderr: its first and last 16 KiB when longer
    stdout: str = ""  # the command's stdout: its first and last 16 KiB when longer


class CaptureError(Body):
    """The PostToolUseFailure hook: the host's JSON as parsed, or the raw text when it is not JSON."""

    payload: Any = None
    # The name (without .json) of the spool file this request is or would be written as; the
    # daemon applies each key once, whether it arrives live, from the spool, or both.
    spool_key: str | None = None


class Failures(Body):
    days: int = 30


# --- context for agents (recall.md §9) --------------------------------------------------------


FRAMINGS = ("observe", "suggest", "assert")
FORMATS = ("markdown", "json", "additional-context")


class Context(Body):
    """`context`; with `pinned_only` it is the per-prompt hook's block (recall.md §9, pinned injection)."""

    on_team = True

    query: str | None = None
    auto: bool = False
    budget: int | None = None  # None: defaultContextBudget, or pinnedInject.budget when pinned_only
    limit: int | None = None
    framing: str = "observe"  # observe, suggest or assert
    format: str = "markdown"  # markdown, json or additional-context
    pinned_only: bool = False
    include_recent: int = 0
    scope: str | None = None
    cross_project: bool = False
    payload: Any = None  # the host's hook JSON (session_id, prompt, cwd) when run as a hook

    def team_refusal(self) -> str | None:
        # The per-prompt hook's pinned block reads a laptop's per-session state.
        return "context --pinned-only" if self.pinned_only else None


# Every request body of this family, for messages.RequestBody.
BODIES = Import | Export | Capture | LearnGit | WatchFailure | CaptureError | Failures | Context
