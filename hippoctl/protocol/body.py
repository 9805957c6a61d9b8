"""The base of every request body, apart so the verbs' bodies can live in modules of their own."""

import re
from typing import ClassVar

import msgspec

_WORD_START = re.compile(r"(?<!^)(?=[A-Z])")


class Body(msgspec.Struct, tag=True, tag_field="t", omit_defaults=True):
    """Base of every request body."""

    # Whether a team server (`hippod serve --team`, its one store on PostgreSQL) serves the verb. A
    # verb needs a laptop's own SQLite store unless its body says otherwise, so a new verb is refused
    # by a team server with a named error (`not_on_team_store`) until it is made to work there.
    on_team: ClassVar[bool] = False

    def team_refusal(self) -> str | None:
        """None when a team server serves this request; else the verb, for the error that names it."""
        return None if self.on_team else verb_words(type(self).__name__)


def verb_words(name: str) -> str:
    """A body's class name as words: DecideList -> `decide list`."""
    return _WORD_START.sub(" ", name).lower()
