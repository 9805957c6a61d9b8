"""Arguments of the ingestion verbs: import, export, capture, learn --git, watch, capture-error and
failures (ingest.md). Paths are made absolute here, against the directory the request acts from."""

from __future__ import annotations

import argparse
import os

from hippoctl.args import argcheck
from hippoctl.args.argcheck import DAYS, UsageError, stdin_text, utf8
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m

# capture --stdin sends the text in the request, which must fit in one frame (16 MiB by default).
MAX_STDIN_BYTES = 8 * 1024 * 1024
# Hook verbs read at most this much of the host's JSON (daemon.md §10.5).
MAX_HOOK_STDIN_BYTES = 1024 * 1024

HOOK_VERBS = frozenset(
    {"capture-error", "pre-compact", "post-compact", "compact-resume", "session-end", "last-sleep"}
)

IMPORT_SOURCES = {
    "chatgpt": "ChatGPT's data export (conversations.json, or the zip), or a memory list",
    "claude": "a CLAUDE.md or a Claude memory.json",
    "cursor": "a .cursorrules file or a .cursor/rules/ folder",
    "markdown": "any structured markdown: a chunk per bullet or paragraph, tagged by its heading",
    "file": "any text file: a chunk per paragraph (markdown by the CLAUDE.md rule)",
}
# After `import`, --json followed by a path names hippod's export format; on its own (at the end, or
# before another option) it is the reply-as-JSON switch every verb takes.
JSON_OUTPUT = True
DRY_RUN = "write nothing; list what would be stored"


def add_verbs(verb: AddVerb) -> None:
    """Register the ingestion verbs on the hippoctl parser."""
    p = verb(
        "import",
        "import memories from another tool, a file, or agents' own notes",
        "hippoctl import --markdown notes.md --tag onboarding",
        "hippoctl import --json hippo-export.json --dry-run",
        "hippoctl import --chatgpt conversations.json --json",
        "hippoctl import --agents",
    )
    source = p.add_mutually_exclusive_group()
    for name, what in IMPORT_SOURCES.items():
        source.add_argument(f"--{name}", dest="source_path", metavar="PATH", type=_Tagged(name), help=what)
    source.add_argument(
        "--agents",
        dest="source_path",
        action="store_const",
        const=("agents", None),
        help="the notes other agents keep (Claude Code, Codex, Gemini, Copilot, ...)",
    )
    p.add_argument(
        "--json",
        dest="import_json",
        action="append",
        nargs="?",
        const=JSON_OUTPUT,
        metavar="PATH",
        help="with a PATH: a hippod (or hippo) export to read back; alone: print the reply as JSON",
    )
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN)
    p.add_argument(
        "--force", action="store_true", help="read the file even when it is unchanged since its last import"
    )
    p.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="add a tag to every memory (repeatable)"
    )

    p = verb(
        "export",
        "write the store's memories out (stdout when no file is given)",
        "hippoctl export memories.json",
        "hippoctl export --format markdown > memories.md",
        "hippoctl export --json --global",
    )
    p.add_argument("file", nargs="?", help="the file to write ('-' or none: stdout)")
    p.add_argument(
        "--format", choices=["json", "markdown"], default="json", help="the document's format (default json)"
    )

    p = verb(
        "capture",
        "extract decisions, rules, errors and preferences from conversation text",
        "pbpaste | hippoctl capture --stdin",
        "hippoctl capture --file chat.txt --dry-run",
        "hippoctl capture --last-session",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--stdin", dest="capture_source", action="store_const", const="stdin", help="read the text from stdin"
    )
    source.add_argument("--file", metavar="PATH", help="read the text from this file")
    source.add_argument(
        "--last-session",
        dest="capture_source",
        action="store_const",
        const="last-session",
        help="the newest Claude Code transcript of this project",
    )
    p.add_argument("--transcript", metavar="PATH", help="with --last-session: this transcript file")
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN)

    p = verb(
        "learn",
        "learn lessons from recent git commits",
        "hippoctl learn --git",
        "hippoctl learn --git --days 30 --repos ~/code/api,~/code/web",
    )
    p.add_argument("--git", action="store_true", required=True, help="from commit subjects (required)")
    p.add_argument("--days", type=DAYS, default=7, metavar="N", help="commits of the last N days (default 7)")
    p.add_argument("--repos", metavar="A,B", help="comma-separated repository paths (default: this one)")

    p = verb(
        "watch",
        "run a command; store its failure as an error memory",
        'hippoctl watch "npm test"',
        'hippoctl watch "make deploy" -C ~/code/api',
    )
    p.add_argument("command", help="the shell command to run (quote it); hippoctl exits with its code")

    p = verb(
        "capture-error",
        "hook verb: store a failed tool call (PostToolUseFailure JSON on stdin)",
        "hippoctl capture-error < payload.json",
        "hippoctl capture-error --strict < payload.json",
    )
    p.add_argument("--strict", action="store_true", help="report failures with exit codes")

    p = verb(
        "failures",
        "failed tool calls by outcome, and repeats across sessions",
        "hippoctl failures",
        "hippoctl failures --days 7 --json",
    )
    p.add_argument("--days", type=DAYS, default=30, metavar="N", help="the last N days (default 30)")


class _Tagged:
    """An argparse type that keeps which format flag a path came with."""

    def __init__(self, name: str) -> None:
        self.__name__ = name  # argparse names the type in its error messages
        self.name = name

    def __call__(self, value: str) -> tuple[str, str]:
        return self.name, value


def base_dir(args: argparse.Namespace) -> str:
    """The directory relative paths are read from: -C's, else the current one."""
    directory = getattr(args, "directory", None)
    return os.path.realpath(directory) if directory else os.getcwd()


def absolute(args: argparse.Namespace, path: str, what: str) -> str:
    """A path argument made absolute against the request's directory (`~` expanded)."""
    utf8(path, what)
    if not path.strip():
        raise UsageError(f"{what} is empty")
    return os.path.normpath(os.path.join(base_dir(args), os.path.expanduser(path)))


def read_stdin(limit: int) -> str:
    """Stdin as text, refusing more than `limit` bytes and bytes that are not UTF-8."""
    return stdin_text(limit, too_big=f"stdin is larger than {limit // (1024 * 1024)} MiB")


def json_output(args: argparse.Namespace) -> bool:
    """Whether `import`'s own --json, given without a path, asks for the reply as JSON."""
    return any(value is JSON_OUTPUT for value in getattr(args, "import_json", None) or ())


def exports_to_stdout(args: argparse.Namespace) -> bool:
    """Whether the command is `export` to stdout, whose reply's text is the document itself."""
    return getattr(args, "verb", None) == "export" and args.file in (None, "-")


def import_source(args: argparse.Namespace) -> tuple[str, str | None]:
    """(format, path) of `import`'s one source: a --<format> PATH, --json PATH or --agents."""
    paths = [value for value in args.import_json or () if isinstance(value, str)]
    if len(paths) > 1:
        raise UsageError(f"import reads one source: --json {paths[0]} or --json {paths[1]}, not both")
    if paths and args.source_path is not None:
        raise UsageError(f"import reads one source: --json {paths[0]} or --{args.source_path[0]}, not both")
    if paths:
        return "json", paths[0]
    if args.source_path is None:
        flags = ", ".join(f"--{name}" for name in IMPORT_SOURCES)
        raise UsageError(f"import needs a source: {flags} or --json with a PATH, or --agents")
    fmt, path = args.source_path
    return str(fmt), path


def _import(args: argparse.Namespace) -> m.Body:
    fmt, path = import_source(args)
    tags = argcheck.tags(args.tag)
    if fmt == "agents":
        if tags or args.force:
            raise UsageError(f"{'--tag' if tags else '--force'} does not apply to import --agents")
        return m.Import(format="agents", dry_run=args.dry_run)
    path = absolute(args, path or "", f"--{fmt}")
    return m.Import(format=fmt, path=path, dry_run=args.dry_run, tags=tags, force=args.force)


def _export(args: argparse.Namespace) -> m.Body:
    path = None if args.file in (None, "-") else absolute(args, args.file, "the export file")
    if path is None and args.format != "json" and getattr(args, "json", False):
        # To stdout, --json prints the memories themselves: the json export document (wants_json).
        raise UsageError("export --json prints the memories as JSON; --format markdown goes without --json")
    return m.Export(path=path, format=args.format)


def _capture(args: argparse.Namespace) -> m.Body:
    if args.transcript is not None and args.capture_source != "last-session":
        raise UsageError("--transcript goes with --last-session")
    if args.file is not None:
        return m.Capture(source="file", path=absolute(args, args.file, "--file"), dry_run=args.dry_run)
    if args.capture_source == "stdin":
        return m.Capture(source="stdin", text=read_stdin(MAX_STDIN_BYTES), dry_run=args.dry_run)
    transcript = None if args.transcript is None else absolute(args, args.transcript, "--transcript")
    return m.Capture(source="last-session", transcript=transcript, dry_run=args.dry_run)


def _learn(args: argparse.Namespace) -> m.Body:
    repos: list[str] = []
    if args.repos is not None:
        repos = [absolute(args, r.strip(), "--repos") for r in args.repos.split(",") if r.strip()]
        if not repos:
            raise UsageError("--repos names no repository")
    return m.LearnGit(days=args.days, repos=repos)


def _failures(args: argparse.Namespace) -> m.Body:
    return m.Failures(days=args.days)


def _capture_error(args: argparse.Namespace) -> m.Body:
    # The hook transport (hippoctl/hook.py) reads stdin and fills in the payload.
    return m.CaptureError()


BUILDERS: dict[str, Builder] = {
    "import": _import,
    "export": _export,
    "capture": _capture,
    "learn": _learn,
    "failures": _failures,
    "capture-error": _capture_error,
}

register("ingest", add_verbs, BUILDERS)
