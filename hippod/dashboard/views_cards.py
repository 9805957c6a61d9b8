"""The dashboard's card board: the work queue's cards (integrations.md §14), one column per state."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.messages_cards import STATES
from hippod.dashboard.calls import ViewCall
from hippod.store.sqlite import cards as card_sql

PER_COLUMN = 50  # cards listed in a column; its count says how many there are


class BoardCard(msgspec.Struct):
    id: int
    title: str
    repo: str | None
    budget: int | None
    updated_at: str


class Board(msgspec.Struct):
    store: str
    statuses: tuple[str, ...]
    counts: dict[str, int]
    columns: dict[str, list[BoardCard]]


async def board(call: ViewCall) -> Board:
    """Every state's count and its newest-updated cards, in the store's board order."""
    store = await call.store()
    reader = store.db.reader
    columns = {
        status: [
            BoardCard(c.id, c.title, c.repo, c.budget, c.updated_at)
            for c in await card_sql.listed(reader, call.tenant, status, PER_COLUMN)
        ]
        for status in STATES
    }
    counts = await card_sql.counts(reader, call.tenant)
    return Board(store.root, STATES, counts, columns)
