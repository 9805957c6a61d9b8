"""Checks every request passes before its handler runs, wherever it came from (the socket or the spool).

A request that fails one is refused as a usage error naming the field: a handler never sees a
working directory no path can hold, nor a number SQLite cannot store.
"""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.messages_cards import CARD_BODIES
from hippod.base.errors import HippoError

# SQLite stores signed 64-bit integers; a larger number fails when it is bound to a statement.
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
# Fields that name rows by their number (one, none or a list), and how a message calls each.
_CARD_NUMBERS = {
    "id": "the card number",
    "run": "the run number",
    "depends_on": "a dependency's card number",
    "on": "a dependency's card number",
}
_ID_FIELDS: dict[type[m.Body], tuple[tuple[str, str], ...]] = {
    m.Resolve: (("n", "the conflict number"),),
    m.DecideGet: (("n", "the decision number"),),
    m.DecideClose: (("n", "the decision number"),),
    m.HandoffShow: (("id", "the handoff number"),),
    **{
        body: tuple((name, what) for name, what in _CARD_NUMBERS.items() if name in body.__struct_fields__)
        for body in CARD_BODIES
    },
}

# Fields that name a memory by its id (one, none or a list): an empty one names none.
_MEMORY_ID_FIELDS: dict[type[m.Body], tuple[str, ...]] = {
    m.Inspect: ("id",),
    m.Forget: ("id",),
    m.Outcome: ("id", "ids"),
    m.Supersede: ("id",),
    m.Reject: ("id",),
    m.Invalidate: ("id",),
    m.Promote: ("id",),
    m.Share: ("id",),
    m.Resolve: ("keep",),
    m.DormantRestore: ("id",),
    m.DormantForget: ("id",),
}


def refusal(request: m.Request) -> str | None:
    """Why the request cannot be served as sent, in one line; None when it passes."""
    if "\x00" in request.cwd:
        return f"the working directory {request.cwd!r} holds a NUL byte, which no path can hold"
    for name, value in request.env.items():
        if "\x00" in name or "\x00" in value:
            return f"the environment variable {name!r} holds a NUL byte"
    body = request.body
    for name, what in _ID_FIELDS.get(type(body), ()):
        value = getattr(body, name)
        for number in value if isinstance(value, list) else [value]:
            problem = None if number is None else validate.id_problem(number, what)
            if problem is not None:
                return problem
    for name in _MEMORY_ID_FIELDS.get(type(body), ()):
        value = getattr(body, name)
        for memory_id in value if isinstance(value, list) else [value]:
            problem = validate.memory_id_problem(memory_id)
            if problem is not None:
                return problem
    for name in body.__struct_fields__:
        value = getattr(body, name)
        if isinstance(value, int) and not isinstance(value, bool) and not _INT_MIN <= value <= _INT_MAX:
            return f"{name} is out of range: {value}"
    return None


def check(request: m.Request) -> None:
    """Raise HippoError `usage` for a request that fails a check of `refusal`."""
    problem = refusal(request)
    if problem is not None:
        raise HippoError("usage", problem)
