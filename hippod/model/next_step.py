"""The next step a text states: what follows its last `Next step:` label.

A snapshot's next step is read through `next_step_of` (store/sqlite/continuity.py), so one stored with its
label, or as a whole message ending in one, is printed under a single `Next step:` label.
"""

from __future__ import annotations

import re

# "Next step:", "Next steps:", "Next:" (optionally in bold) opening a line or following a sentence.
_NEXT_LABEL = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+)[ \t]*[*_]{0,2}next(?:[ \t]+steps?)?[ \t]*:[*_]{0,2}[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)


def split_next_step(text: str) -> tuple[str, str | None]:
    """(the text before its last `Next step:` label, what follows the label up to the end of that
    paragraph); (the text, None) when it has no such label."""
    found = list(_NEXT_LABEL.finditer(text))
    if not found:
        return text.strip(), None
    step = text[found[-1].end() :].split("\n\n", 1)[0].strip()
    return (text[: found[-1].start()].strip(), step) if step else (text.strip(), None)


def next_step_of(text: str) -> str:
    """The next step a text states: what follows its last `Next step:` label, else the whole text;
    so a label printed before it is never doubled."""
    before, step = split_next_step(text)
    return before if step is None else step
