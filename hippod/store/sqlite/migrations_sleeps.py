"""Migration 15: the sleeps that covered one tenant of a store (a key holder's `POST /v1/sleep`), kept
apart from migrations.py for size."""

from __future__ import annotations

import sqlite3


def m015_tenant_sleeps(conn: sqlite3.Connection) -> None:
    """`consolidation_runs.tenant_id`: the one tenant a run covered, NULL for a run over the whole store.
    Only whole-store runs set the pace of adaptive decay and mark what every memory was compared
    against (meta `last_sleep`), so a tenant's own sleeps never change another tenant's next one."""
    conn.execute("ALTER TABLE consolidation_runs ADD COLUMN tenant_id TEXT")
