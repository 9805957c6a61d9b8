"""What an argv names before it is parsed: enough to route a call without loading every verb's
arguments (the per-prompt hook runs before every prompt, so its path stays short)."""

from __future__ import annotations

from collections.abc import Sequence

# Options before the verb that take a value (so the value is not mistaken for the verb).
VALUED = frozenset({"-C", "--timeout"})


def verb_index(argv: Sequence[str]) -> int:
    """Where the verb is in argv, len(argv) when there is none: the first word that is neither an
    option nor an option's value."""
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg in VALUED:
            skip = True
        elif not arg.startswith("-"):
            return i
    return len(argv)


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb argv names (the first word that is not an option or an option's value), if any."""
    i = verb_index(argv)
    return argv[i] if i < len(argv) else None


def is_prompt_hook(argv: Sequence[str]) -> bool:
    """True for `context --pinned-only ...`, the per-prompt hook (with --json it takes the general path)."""
    return "--pinned-only" in argv and "--json" not in argv and verb_of(argv) == "context"
