"""The salient lines of a failed command's output, as `watch` (ingest.md §6) and `capture-error`
(§7) store them. Pure.

A failing `npm test` prints pages: the test runner's report, npm's own `npm ERR!` chatter, a
timestamped log path. A memory of it needs the error, not the log, so the rule is:

1. Scrub secrets (hippod/model/secrets.py), so a line cut in step 4 never keeps part of one.
   Read the command's stderr, then its stdout, line by line; colour codes are removed, and npm's
   `npm ERR!` / `npm error` prefix is dropped.
2. Drop chatter: npm's notices and boilerplate (`code …`, `errno …`, `Exit status …`, "A complete
   log of this run can be found in", its log path, "This is probably not a problem with npm"),
   the rules around headings and headings in capitals (`==== FAILURES ====`), stack frames
   (`at …`, `Traceback (most recent call last):`) and echoed source lines (`throw …`, `raise …`).
3. Keep the lines that look like errors: the words error(s), exception, fail/failed/failing/failure,
   fatal, panic, abort, traceback, denied, refused, timed out, segmentation fault, cannot, can't,
   could not, unable to, not found, no such file (case-insensitive; `0 failed` and `no errors` do
   not count), a name ending in `Error` or `Exception` (`TypeError`), pytest's `E   ` lines and the
   ✕ ✗ ✖ × marks of test runners.
4. Normalise each: paths inside the working folder become relative, the home folder becomes `~`,
   temporary folders become `<tmp>`, ISO timestamps and clock times become `<time>`, and runs of
   spaces become one. Each line is cut to 200 characters.
5. Keep the first 5, each once (compared case-insensitively).
6. No line looks like an error: the last 3 lines of stderr (of stdout when stderr has none).

The lines are joined with ` | `, so the memory is one line in every block that shows it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Sequence

from hippod.model.secrets import scrub

MAX_LINES = 5
FALLBACK_LINES = 3
LINE_CHARS = 200
SEPARATOR = " | "

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_NPM_PREFIX = re.compile(r"^npm (?:ERR!|error)(?:\s+|$)")
_NPM_CHATTER = re.compile(r"^npm (?:notice|warn|WARN|http|timing|verb|info|sill)\b")
_NPM_BOILERPLATE = re.compile(
    r"^(?:code|errno|syscall|path|command|cwd|workspace|location|signal|exit status)\b"
    r"|complete log of this run|probably not a problem with npm|additional logging output above"
    r"|[/\\]_logs[/\\]\S*debug\S*\.log",
    re.IGNORECASE,
)
_NOT_ERROR_LINE = re.compile(r"^\s*(?:at\s+\S|throw\b|raise\b|Traceback \(most recent call last\))")
# Rules around a heading (`==== FAILURES ====`, `---`), and a heading in capitals alone.
_DECORATION = re.compile(r"^[\s=_\-*#~]{3,}|[\s=_\-*#~]{3,}$")
_HEADING = re.compile(r"[A-Z]+(?: [A-Z]+){0,2}")
_ERROR_WORDS = re.compile(
    r"\b(?:errors?|exceptions?|fail|failed|failing|failures?|fatal|panic|panicked|abort|aborted"
    r"|traceback|denied|refused|timed out|segmentation fault|cannot|can't|could not|unable to"
    r"|not found|no such file)\b"
    r"|(?-i:(?<=[a-z])(?:Error|Exception)\b)"
    r"|^\s*E\s{2,}\S"
    r"|^\s*[✕✗✖×]\s",
    re.IGNORECASE,
)
_NO_ERRORS = re.compile(r"\b(?:0|no)\s+(?:errors?|failures?|failed|failing)\b", re.IGNORECASE)
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T _]\d{2}[:_]\d{2}(?:[:_]\d{2}(?:[.,_]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|(?<![\d:])\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\d:])"
)
_SPACES = re.compile(r"\s+")


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for raw in _ANSI.sub("", text).splitlines():
        line = _DECORATION.sub("", raw.rstrip())
        if _HEADING.fullmatch(line.strip()):
            continue
        if _NPM_CHATTER.match(line):
            continue
        if _NPM_PREFIX.match(line):
            line = _NPM_PREFIX.sub("", line)
            if not line.strip() or _NPM_BOILERPLATE.search(line.strip()):
                continue
        if line.strip():
            out.append(line)
    return out


def _is_error(line: str) -> bool:
    if _NOT_ERROR_LINE.match(line):
        return False
    return bool(_ERROR_WORDS.search(_NO_ERRORS.sub("", line)))


def _prefixes(cwd: str | None, home: str | None) -> list[tuple[re.Pattern[str], str]]:
    """(a folder at the start of a path, what it becomes), longest folder first so the most
    specific one wins."""
    pairs: set[tuple[str, str]] = set()
    for folder, name in ((cwd, ""), (home, "~/")):
        if folder and folder.rstrip("/\\") not in ("", "/"):
            pairs |= {(os.path.join(p, ""), name) for p in (folder, os.path.realpath(folder))}
    for folder in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/private/tmp"):
        pairs |= {(os.path.join(p, ""), "<tmp>/") for p in (folder, os.path.realpath(folder))}
    ordered = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)
    return [(re.compile(r"(?<![\w.~/<>-])" + re.escape(folder)), name) for folder, name in ordered]


def normalise(line: str, prefixes: Sequence[tuple[re.Pattern[str], str]]) -> str:
    """The line with paths shortened, timestamps replaced and spacing collapsed, cut to 200 chars."""
    for folder, name in prefixes:
        line = folder.sub(name, line)
    line = _SPACES.sub(" ", _TIMESTAMP.sub("<time>", line)).strip()
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1].rstrip() + "…"


def _first_distinct(lines: Iterable[str], limit: int) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for line in lines:
        key = line.casefold()
        if line and key not in seen:
            seen.add(key)
            kept.append(line)
        if len(kept) == limit:
            break
    return kept


def salient_lines(stderr: str, stdout: str, *, cwd: str | None, home: str | None) -> list[str]:
    """The lines of the module's rule, in the order they were printed (stderr first)."""
    prefixes = _prefixes(cwd, home)
    err, out = _lines(scrub(stderr)), _lines(scrub(stdout))
    found = [normalise(line, prefixes) for line in (*err, *out) if _is_error(line)]
    if found:
        return _first_distinct(found, MAX_LINES)
    tail = (err or out)[-FALLBACK_LINES:]
    return _first_distinct((normalise(line, prefixes) for line in tail), FALLBACK_LINES)


def summary(stderr: str, stdout: str, *, cwd: str | None, home: str | None) -> str:
    """The salient lines on one line, or "" when the command printed nothing."""
    return SEPARATOR.join(salient_lines(stderr, stdout, cwd=cwd, home=home))
