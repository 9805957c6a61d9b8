"""Where each verb family registers its verbs: the arguments it adds to the parser, and the request
body each of its verbs sends.

A family module calls `register` when it is imported; command.py imports every family and reads
`families()` and `BUILDERS`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

from hippoctl.protocol.body import Body

# verb(name, help, *examples): the verb's sub-parser (a stand-in when another verb was named).
AddVerb = Callable[..., argparse.ArgumentParser]
# The request body a verb sends, from its parsed arguments; raises UsageError for arguments the
# daemon would refuse.
Builder = Callable[[argparse.Namespace], Body]

# --help lists the verbs family by family, in this order (each family's module of this package).
ORDER = (
    "foundation",
    "lifecycle",
    "ingest",
    "continuity",
    "goals",
    "hooks",
    "context",
    "integrations",
    "http",
    "cards",
    "backup",
    "daemon",
)

_ADD_VERBS: dict[str, Callable[[AddVerb], None]] = {}
# Every verb that sends a request body of its own, and its builder.
BUILDERS: dict[str, Builder] = {}


def register(family: str, add_verbs: Callable[[AddVerb], None], builders: Mapping[str, Builder]) -> None:
    """Add a family: `add_verbs` adds its verbs to the parser, `builders` their request bodies."""
    if family not in ORDER:
        raise ValueError(f"{family}: not a verb family of registry.ORDER")
    taken = BUILDERS.keys() & builders.keys()
    if taken:
        raise ValueError(f"{family}: verbs {sorted(taken)} already have a builder")
    _ADD_VERBS[family] = add_verbs
    BUILDERS.update(builders)


def families() -> list[Callable[[AddVerb], None]]:
    """Each registered family's `add_verbs`, in --help's order."""
    return [_ADD_VERBS[name] for name in ORDER if name in _ADD_VERBS]
