"""The instruction block in a project's CLAUDE.md or AGENTS.md (integrations.md §4, §8).

The block sits between `<!-- hippo:start -->` and `<!-- hippo:end -->`; its body (the text between
the markers, line endings made LF and outer whitespace trimmed) is recognised against every body
hippod has shipped, and against the bodies the original hippo wrote between the same markers. A
known older body is replaced by the current one; any other body is the user's, and is left alone,
as is a start marker with no end marker after it. Text outside the markers is never touched, and a
file is patched only when it already exists.

The agent runs the block's commands in its own shell, whose PATH rarely holds the folder the client
lives in (a bare `hippoctl` there is `not found`, exit 127), so since version 2 they start with the
installing client's own prefix, as the hooks do (hippoctl/selfcommand.py), written from `~/` when
it lies under the home folder: the block is committed with the project, and teammates who install
hippod the same way (pipx, uv tool: `~/.local/bin/hippoctl`) get the same text. The current body
under another prefix that starts a hippoctl on this machine (`resolves`: a teammate's install that
is here too) counts as current, so teammates do not rewrite each other's committed block; under a
prefix that starts nothing here (an install that moved, a teammate's path on another machine) it
counts as an older body, as does version 1's bare `hippoctl`, which an agent's PATH rarely holds.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

from hippod.integrations.commands import is_hippoctl_prefix, split, starts_hippoctl

START = "<!-- hippo:start -->"
END = "<!-- hippo:end -->"
CLAUDE = "claude"  # CLAUDE.md
AGENTS = "agents"  # AGENTS.md, read by Codex, Cursor, OpenClaw, OpenCode and Pi

# Every line is read on every session start, so each one asks only for what no hook does.
_CLAUDE_V1 = """## Project Memory (Hippo)

Pinned and recent memories arrive with every prompt; never fetch them by hand.

- Once when a task begins (not on every prompt), and whenever that per-prompt hook is missing: \
`hippoctl context --auto --budget 1500`
- The moment the cause of a failure is known, never as a closing step: \
`hippoctl remember "<what went wrong and why>" --error`"""

_AGENTS_V1 = """## Project Memory (Hippo)

- Once when a task begins (not on every prompt), and whenever no hook feeds you memories: \
`hippoctl context --auto --budget 1500`
- The moment the cause of a failure is known, never as a closing step: \
`hippoctl remember "<what went wrong and why>" --error`
- The moment you learn something worth keeping beyond this session, leaving out secrets and \
personal details: `hippoctl remember "<what you learned and why>"`
- When the session finishes, unless a hook captures it: pipe a 2-5 bullet summary (decisions, \
errors, lessons) into `hippoctl capture --stdin`"""

# From version 2 a body is a template: PREFIX stands for the words that start the client.
PREFIX = "{hippoctl}"
_CLAUDE_V2 = _CLAUDE_V1.replace("`hippoctl ", f"`{PREFIX} ")
_AGENTS_V2 = _AGENTS_V1.replace("`hippoctl ", f"`{PREFIX} ")

# (variant, version) -> body. Add a new version here; never change or drop a shipped one.
BODIES: dict[tuple[str, int], str] = {
    (CLAUDE, 1): _CLAUDE_V1,
    (AGENTS, 1): _AGENTS_V1,
    (CLAUDE, 2): _CLAUDE_V2,
    (AGENTS, 2): _AGENTS_V2,
}
CURRENT = {CLAUDE: 2, AGENTS: 2}

# sha256 of the bodies the original hippo wrote between the same markers (up to its 1.33): its
# claude-code block, and its codex, cursor, openclaw, opencode and pi blocks (all AGENTS.md).
_ORIGINAL: dict[str, tuple[str, ...]] = {
    CLAUDE: (
        "c04e48f2896a4fee9ae98f8f832e2d26a3910269df3beb5bcd6baee3cd9db68e",
        "e6b12bd8983c032e5ca8e95a97aeff4178a5a05026d10acad5b2e1b25d5656dd",
        "4c64e11d3e5be68fa547c9248d7553feb645a02f7cf13ba02f7275e1854baf44",
        "293bd319bbc86225a0ee027490a3322a0336257f5832f7fade65e4ffb2530654",
        "c80e760208aed70f6094757736b9a2f496ba5c30d88bc2a7ae3e128b403dcc6b",
    ),
    AGENTS: (
        "15abcece9712279fb4721f7a8f0ba117457400278977beb5cf5b5d7ba49f7b1a",
        "0c81a6b2c21473313001f624b80ea870e661aecbfda9bfe8503febc0d5f34533",
        "88e45358aba4f17912f113221c991dc758275991335d1daa4aa1974a69c46769",
        "e61632fe177450a06541c148a9a4f9182530d8df667806927a99792825903298",
        "f1e5815a4b7205c43e2db792215df1943e7853635a1e0f4561b150a41b756451",
        "a1415ecda9b2f8f317c233738e4a5ac16e6b2cc385a017c0c8ecfbfacbcab6a3",
        "a38c428bbdfc14ec50f6f7b9183785170a4eae1ce9cde60257cca6efc7206b3a",
        "0ec9f556abfd55e94f9e6fb47ece0fc5acb841977d144b35a2371e03645d8636",
        "0fdf490b8120e538b0f2c2417b844d39da772415715d0572f31c5337162a4912",
        "40524c3bd5a2eb04036567cc761451961d950995768bccd93a9900b0f75eafea",
        "7b3518e8c0feaa7b8b454cde7743f7598ad14cd9979e1680d0954484e2464aae",
        "1137dcf04568caf011e41db77bc55324faee88bc29c3a5fcc98ab687cd952a16",
        "80d457096eabd14cc9a2178c06cb76b2440c02eec4eb117ef9fe57eaa03c3c20",
        "4601c67c31f41cd5b1324cfccdb1afc66872b7fb0bc1e7c5789ecabb1f6bd942",
        "90d9e21d8d1ecbe99a0fc7b7f2d9f8af7b5315a6b4b0203df4f7a9bdc0699b98",
        "ca4e00284f1397ed2f2fcc53210c27f63b90edf6b37fd66dad5ee58b94ea3eee",
        "9af7ca33d8b9e96cec2dd519d5a52435ccd7bcb7590a9b1c4f8615da70ac48ce",
        "8b8f5986d7f7ed15f06e68720d8913c3cab23d94366b411935ca2bbaa334553b",
        "37767b355e18beac726b05b9e2b898dab8c6135fd7b98f3aa52edc734d5dd283",
        "6e85a5cccb3cfeaa9a080713754936db730f96376f94cc9a9888a746149c7268",
        "ffb8b55d4ee75b876afabfa75df3836b6aa50cff117120562b71fa28888a5f7b",
    ),
}


def digest(body: str) -> str:
    """sha256 of a body with LF line endings and outer whitespace trimmed (an editor's CRLF or a
    trailing newline does not make a block edited)."""
    return hashlib.sha256(body.replace("\r\n", "\n").strip().encode("utf-8")).hexdigest()


def block_prefix(command: str, home: str | None = None) -> str:
    """The words the block's commands start with, from the installing client's hook prefix
    (selfcommand.hook_command): the same, with a path under the home folder written from `~/`."""
    home = os.path.expanduser("~") if home is None else home
    words = split(command)
    if sys.platform == "win32" or not words or not home.startswith("/") or home == "/":
        return command
    first = words[0]
    if not first.startswith(home.rstrip("/") + "/"):
        return command
    # `~/` stays outside the quotes, where sh expands it; the rest is quoted as a word.
    rest = "~/" + shlex.quote(first[len(home.rstrip("/")) + 1 :])
    return " ".join([rest, *(shlex.quote(w) for w in words[1:])])


def current_body(variant: str, prefix: str) -> str:
    """The current body, its commands started by `prefix` (block_prefix)."""
    return BODIES[(variant, CURRENT[variant])].replace(PREFIX, prefix)


def _shipped() -> dict[str, tuple[str, str]]:
    table = {
        digest(body): (variant, str(version))
        for (variant, version), body in BODIES.items()
        if PREFIX not in body
    }
    for variant, digests in _ORIGINAL.items():
        table.update({d: (variant, "original") for d in digests})
    return table


# digest -> (variant, version): every body without a prefix that counts as unedited.
SHIPPED = _shipped()


def _template_pattern(template: str) -> re.Pattern[str]:
    """A template as a pattern: the first PREFIX captures the prefix, the others must repeat it."""
    first, *rest = template.split(PREFIX)
    return re.compile(re.escape(first) + r"(?P<prefix>[^`\n]+)" + "(?P=prefix)".join(map(re.escape, rest)))


_TEMPLATES = [_template_pattern(body) for body in BODIES.values() if PREFIX in body]


_CURRENT_TEMPLATES = {variant: _template_pattern(BODIES[(variant, CURRENT[variant])]) for variant in CURRENT}


def _hippoctl_prefix(pattern: re.Pattern[str], body: str) -> str | None:
    """The prefix `body` fills `pattern`'s template with, when that prefix starts hippoctl."""
    found = pattern.fullmatch(body.replace("\r\n", "\n").strip())
    if found is None:
        return None
    words = split(found.group("prefix"))
    return found.group("prefix") if words is not None and is_hippoctl_prefix(words) else None


def template_prefix(body: str) -> str | None:
    """The prefix of a body that is a shipped template under some hippoctl prefix (version 1's
    bare `hippoctl` included: it is version 2 under that prefix), else None."""
    return next((p for p in (_hippoctl_prefix(t, body) for t in _TEMPLATES) if p is not None), None)


def current_prefix(body: str, variant: str) -> str | None:
    """The prefix of a body that is `variant`'s current body under some hippoctl prefix, else None."""
    return _hippoctl_prefix(_CURRENT_TEMPLATES[variant], body)


def _from_home(word: str, home: str) -> str:
    """A first word as sh expands it: `~/...` against the home folder."""
    return home.rstrip("/") + word[1:] if word.startswith("~/") else word


def _join(words: list[str]) -> str:
    return subprocess.list2cmdline(words) if sys.platform == "win32" else shlex.join(words)


def resolves(prefix: str, own: str, home: str | None = None) -> bool:
    """Whether a block's `prefix` starts, on this machine, a hippoctl an agent's shell can run; `own`
    is this client's block prefix (block_prefix), which always does.

    Another prefix must be written as block_prefix writes one (an absolute path, or `~/` and a
    quoted rest: no word the shell would expand or split otherwise, and no relative path, which the
    agent's working folder, the repository, would decide), name an executable regular file, and be
    hippoctl: a script of that name, or `<interpreter> -m hippoctl` with this client's interpreter.
    Nothing is run to find out.
    """
    if prefix == own:
        return True
    home = os.path.expanduser("~") if home is None else home
    words = split(prefix)
    if not words or not is_hippoctl_prefix(words):
        return False
    path = _from_home(words[0], home)
    if not os.path.isabs(path) or block_prefix(_join([path, *words[1:]]), home) != prefix:
        return False
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return False
    if len(words) == 1:  # is_hippoctl_prefix: named hippoctl
        return True
    own_words = split(own) or []
    if len(own_words) != 3:
        return False
    return os.path.realpath(path) == os.path.realpath(_from_home(own_words[0], home))


def unedited(body: str, shipped: dict[str, tuple[str, str]] = SHIPPED) -> bool:
    """Whether a block's body is one hippod or the original hippo wrote (any version, any prefix)."""
    return digest(body) in shipped or template_prefix(body) is not None


_CODE = re.compile(r"`([^`\n]+)`")


def commands(body: str) -> list[str]:
    """The commands a body asks the agent to run: its inline code that starts hippoctl (a bare
    `hippoctl`, a path to it, or `<python> -m hippoctl`), each once, in order."""
    found: list[str] = []
    for match in _CODE.finditer(body):
        command = match.group(1).strip()
        if starts_hippoctl(split(command) or []) and command not in found:
            found.append(command)
    return found


def own_commands(prefix: str) -> frozenset[str]:
    """Every command the current bodies give under `prefix`: what doctor may run of a block."""
    return frozenset(c for variant in CURRENT for c in commands(current_body(variant, prefix)))


@dataclass(frozen=True)
class Span:
    """Where the block is: `start`..`end` covers both markers; `body` is the text between them.
    `end` is -1 for a start marker with no end marker after it."""

    start: int
    end: int
    body: str


def find(text: str) -> Span | None:
    """The first block in `text`, or None when there is no start marker."""
    start = text.find(START)
    if start < 0:
        return None
    close = text.find(END, start + len(START))
    if close < 0:
        return Span(start, -1, "")
    return Span(start, close + len(END), text[start + len(START) : close])


def state(text: str | None, variant: str, prefix: str, shipped: dict[str, tuple[str, str]] = SHIPPED) -> str:
    """`absent` (no file or no block), `installed` (the current body under `prefix`, or under another
    prefix that `resolves` here), `outdated` (an older shipped body, or the current one under a
    prefix that does not resolve) or `edited` (anything else, an unterminated block, or a stray end
    marker)."""
    if text is None:
        return "absent"
    span = find(text)
    if span is None:
        return "edited" if END in text else "absent"
    if span.end < 0:
        return "edited"
    if digest(span.body) == digest(current_body(variant, prefix)):
        return "installed"
    other = current_prefix(span.body, variant)
    if other is not None and resolves(other, prefix):
        return "installed"
    return "outdated" if unedited(span.body, shipped) else "edited"


def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def render(variant: str, prefix: str, eol: str = "\n") -> str:
    """The whole block, markers included, without a final newline."""
    return eol.join([START, *current_body(variant, prefix).split("\n"), END])


def patched(
    text: str, variant: str, prefix: str, shipped: dict[str, tuple[str, str]] = SHIPPED
) -> tuple[str, str]:
    """(new text, what happened): `added` after a blank line, `updated` from an older body, or the
    text unchanged with `current` or `edited`."""
    found = state(text, variant, prefix, shipped)
    eol = _eol(text)
    block = render(variant, prefix, eol)
    if found == "absent":
        if not text:
            return block + eol, "added"
        gap = eol if text.endswith("\n") else eol + eol
        return text + gap + block + eol, "added"
    if found == "outdated":
        span = find(text)
        assert span is not None
        return text[: span.start] + block + text[span.end :], "updated"
    return text, "current" if found == "installed" else "edited"


def without(text: str, shipped: dict[str, tuple[str, str]] = SHIPPED) -> tuple[str, str]:
    """(new text, what happened): the unedited block (of any version, under any prefix) `removed`
    with the blank line `patched` put before it, or the text unchanged with `absent` or `edited`."""
    span = find(text)
    if span is None or span.end < 0 or not unedited(span.body, shipped):
        return text, "edited" if span is not None or END in text else "absent"
    eol = _eol(text)
    before, after = text[: span.start], text[span.end :]
    if after.startswith(eol):
        after = after[len(eol) :]
    if before.endswith(eol + eol) and (not after or after.startswith(eol)):
        before = before[: -len(eol)]
    return before + after, "removed"
