"""How a memory is a row of the memories table and back, what recall reads of those rows, and the
recall admission filter: shared by the SQLite store (memories.py) and the team store's SQL
(hippod/store/postgres/memories.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from hippod.model.digest import digests
from hippod.model.memory import COLUMNS, Memory
from hippod.model.terms import fts_columns

_SELECT = ", ".join(COLUMNS)
_NCOLS = len(COLUMNS)
_JSON_LISTS = ("tags", "conflicts_with", "parents")
_BOOLS = ("pinned", "legacy_base")
_JSON_INDEXES = [COLUMNS.index(k) for k in _JSON_LISTS]
_BOOL_INDEXES = [COLUMNS.index(k) for k in _BOOLS]
_json_encode = msgspec.json.encode
_json_decode = msgspec.json.decode


def row_to_memory(row: Sequence[Any]) -> Memory:
    """Build a Memory from a row selected in COLUMNS order (extra trailing columns are ignored)."""
    # Positional construction: recall decodes 200 of these per store, so this is a hot path.
    values = list(row[:_NCOLS])
    for index in _JSON_INDEXES:
        value = values[index]
        values[index] = [] if value == "[]" else _json_decode(value)  # most lists are empty
    for index in _BOOL_INDEXES:
        values[index] = bool(values[index])
    return Memory(*values)


def memory_values(memory: Memory) -> list[Any]:
    """The row for a Memory, in COLUMNS order."""
    values = [getattr(memory, key) for key in COLUMNS]
    for index in _JSON_INDEXES:
        values[index] = _json_encode(values[index]).decode()
    for index in _BOOL_INDEXES:
        values[index] = int(values[index])
    return values


INSERT_SQL = (
    f"INSERT INTO memories ({_SELECT}, content_digest, fts_content, fts_tags) "
    f"SELECT {', '.join('?' * (_NCOLS + 3))} WHERE NOT EXISTS "
    "(SELECT 1 FROM rejected_values WHERE tenant_id = ? AND digest IN (?, ?))"
)


def insert_row(memory: Memory) -> list[Any]:
    """INSERT_SQL's parameters for a memory: its row, its digest and index terms, the tombstone probe."""
    digest, legacy = digests(memory.content)
    fts_content, fts_tags = fts_columns(memory.content, memory.tags)
    return [*memory_values(memory), digest, fts_content, fts_tags, memory.tenant_id, digest, legacy]


def admission(
    tenant: str, include_superseded: bool, scope: str | None, *, mark: str = "?"
) -> tuple[str, list[Any]]:
    """The recall admission filter (recall.md §2) as SQL on alias m, and its parameters.

    `mark` is the driver's parameter marker: "?" for SQLite, "%s" for psycopg (the team store),
    which reads any % as the start of one, so there a literal % is written %%.
    """
    percent = "%%" if mark == "%s" else "%"
    sql = f"m.tenant_id = {mark} AND m.layer != 'buffer' AND m.kind != 'archived'"
    params: list[Any] = [tenant]
    if not include_superseded:
        sql += " AND m.superseded_by IS NULL"
    private = f"'{percent}:private:{percent}'"
    default_scope = f"(m.scope IS NULL OR (m.scope != 'unknown:legacy' AND m.scope NOT LIKE {private}))"
    if scope:
        sql += f" AND ({default_scope} OR m.scope = {mark})"
        params.append(scope)
    else:
        sql += f" AND {default_scope}"
    return sql, params
