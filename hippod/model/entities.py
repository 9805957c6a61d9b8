"""The entities a memory names, found without a model: what the graph of `recall --hops` and
`GET /v1/graph` links memories through.

From a memory's tags, envelope and text, deterministically:

- `entity` — each `entity:<name>` tag (the name lowercased);
- `artifact` — its `artifact_ref`;
- `file` — file paths in its text: a word with a `/` and an extension (`src/app/main.py`), or a bare
  file name whose extension is a common source or config one (`pyproject.toml`);
- `symbol` — code names in its text: a backticked span (`` `retry_budget()` ``, without the `()`),
  CamelCase (`PaymentGateway`, `getUser`), snake_case (`retry_budget`) and SCREAMING_SNAKE
  (`ANTHROPIC_API_KEY`) identifiers;
- `decision` — a memory `decide` made: the decision's first line;
- `policy` — a memory tagged `policy` or `rule`: its first line.

A decision or policy `references` every other entity its memory names; in any other memory the
first CO_MENTIONED entities are each `mentioned-with` the others (the graph's relations).

Only the first SCAN_CHARS characters of a memory's text are read (its first line and its names come
first; a pasted log or file past them would only cost time on the write), and every pattern runs in
time linear in what it reads: none can restart inside a run it has already failed on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

ENTITY_TYPES = ("entity", "artifact", "file", "symbol", "decision", "policy")
MAX_NAME = 512
MAX_PER_MEMORY = 32  # a long pasted log names hundreds; the first ones say what it is about
TITLE_CHARS = 120
CO_MENTIONED = 8  # the first entities of a memory are linked pairwise: 28 relations at most
POLICY_TAGS = ("policy", "rule")
SCAN_CHARS = 16_384

_BACKTICK = re.compile(r"`([^`\n]{2,64})`")
_PATH = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)+[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,8})(?![\w/])")
_FILE_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|sql|md|json|yaml|yml|toml|"
    "ini|cfg|lock|html|css|scss|vue|proto|tf|gradle"
)
_FILE = re.compile(rf"(?<![\w/.:-])([\w-]+(?:\.[\w-]+)*\.(?:{_FILE_EXTENSIONS}))(?![\w/]|\.\w)")
_CAMEL = re.compile(r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+)(?!\w)")
_SNAKE = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?!\w)")
# A scheme starts a run (never inside one) and is taken whole (possessive): on `a.a.a.…` a looser
# pattern tries each position again to the run's end, quadratic in its length.
_URL = re.compile(r"(?<![\w+.-])[a-z][\w+.-]*+://\S+")


@dataclass(frozen=True, slots=True)
class Found:
    """What one memory contributes to the graph: the entities it names, as (type, name), in the order
    found, and the relations (from, to, rel) among them."""

    entities: list[tuple[str, str]]
    relations: list[tuple[tuple[str, str], tuple[str, str], str]]


def _title(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:TITLE_CHARS]


def scanned(content: str) -> str:
    """The part of a memory's text its entities are read from: the first SCAN_CHARS characters, cut
    back to the last whitespace so that no name is read half."""
    if len(content) <= SCAN_CHARS:
        return content
    head = content[:SCAN_CHARS]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:cut] if cut > 0 else head


def symbols(text: str) -> list[tuple[str, str]]:
    """The file paths and code names in `text`, as ("file" | "symbol", name), first-seen order.

    A pattern runs only when `text` holds the character every match of it needs (a URL's `://`, a
    path's `/`, a file name's `.`, a backtick, a snake name's `_`, a CamelCase name's capital):
    most memories hold few of them, and an import reads thousands of memories.
    """
    found: list[tuple[str, str]] = []
    if "://" in text:
        text = _URL.sub(" ", text)
    if "`" in text:
        for match in _BACKTICK.finditer(text):
            inner = match.group(1).strip()
            if inner.endswith("()"):
                inner = inner[:-2]
            if not inner or " " in inner:
                continue  # a command line or a phrase, not a name
            found.append(("file" if _PATH.fullmatch(inner) or _FILE.fullmatch(inner) else "symbol", inner))
    rest = text
    if "." in text:  # a path ends in an extension too
        if "/" in text:
            found.extend(("file", match.group(1)) for match in _PATH.finditer(text))
        found.extend(("file", match.group(1)) for match in _FILE.finditer(text))
        # File names are taken out before the identifiers are looked for: `main.py` is no `main` symbol.
        rest = _FILE.sub(" ", _PATH.sub(" ", text) if "/" in text else text)
    if not rest.islower():  # a string with no capital letter holds no CamelCase name
        found.extend(("symbol", match.group(1)) for match in _CAMEL.finditer(rest))
    if "_" in rest:
        found.extend(("symbol", match.group(1)) for match in _SNAKE.finditer(rest))
    return found


def extract(content: str, tags: Sequence[str], artifact_ref: str | None, source: str) -> Found:
    """The entities and relations of one memory (see the module's docstring)."""
    named: list[tuple[str, str]] = []
    for tag in tags:
        if tag.startswith("entity:") and tag[7:].strip():
            named.append(("entity", tag[7:].strip().lower()))
    if artifact_ref and artifact_ref.strip():
        named.append(("artifact", artifact_ref.strip()))
    text = scanned(content)
    named += symbols(text)
    seen: set[tuple[str, str]] = set()
    entities: list[tuple[str, str]] = []
    for kind, name in named:
        key = (kind, name[:MAX_NAME])
        if key not in seen and len(entities) < MAX_PER_MEMORY:
            seen.add(key)
            entities.append(key)
    title = _title(text)
    head: tuple[str, str] | None = None
    if title and source == "decision":
        head = ("decision", title)
    elif title and any(t in POLICY_TAGS for t in tags):
        head = ("policy", title)
    if head is None:
        firsts = entities[:CO_MENTIONED]
        pairs = [(a, b, "mentioned-with") for i, a in enumerate(firsts) for b in firsts[i + 1 :]]
        return Found(entities, pairs)
    relations = [(head, other, "references") for other in entities]
    return Found([head, *entities], relations)
