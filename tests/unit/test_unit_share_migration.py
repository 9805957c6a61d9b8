"""Migration 16 (store/sqlite/migrations_share.py) on a global store written before copies recorded
their origin."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from hippod.store.sqlite import migrations

ISO = "2026-01-01T00:00:00.000Z"
COPIES = [
    # (id, source, content, made by auto-share)
    ("g_auto_local", f"shared:demo:{ISO}", "always use pnpm instead of npm in this repo", True),
    ("g_auto_named", f"shared:demo:{ISO}", "The demo staging box is slow on Mondays", True),
    ("g_auto_lesson", f"shared:demo:{ISO}", "PowerShell reads scripts as UTF-16 without a BOM", True),
    ("g_by_hand", f"shared:demo:{ISO}", "Build breaks when web/src/app.ts imports lodash", False),
    ("g_promoted", "promoted:api", "Prefer rg over grep", False),
    ("g_global", "cli", "A memory remembered with --global", False),
]


def test_old_copies_get_their_origin_and_auto_shared_ones_naming_their_project_go_dormant(
    old_store: Callable[[int], sqlite3.Connection],
) -> None:
    conn = old_store(15)
    columns = "id, content, source, origin_project, created, valid_from, last_retrieved, half_life_days, "
    columns += "updated_at, content_digest, fts_content, fts_tags"
    for memory_id, source, content, auto in COPIES:
        conn.execute(
            f"INSERT INTO memories ({columns}) VALUES (?, ?, ?, '', 'x', 'x', 'x', 365, 'x', 'd', '', '')",
            (memory_id, content, source),
        )
        actor = "daemon" if auto else "cli:0"
        conn.execute(
            "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id) VALUES (?, 'default', ?, ?, ?)",
            (ISO, actor, "share" if source.startswith("shared:") else "remember", memory_id),
        )
    assert migrations.migrate(conn) == migrations.SCHEMA_VERSION
    live = conn.execute("SELECT id, origin_project, source FROM memories ORDER BY id").fetchall()
    assert live == [
        ("g_auto_lesson", "demo", f"auto-shared:demo:{ISO}"),
        ("g_by_hand", "demo", f"shared:demo:{ISO}"),
        ("g_global", "", "cli"),
        ("g_promoted", "api", "promoted:api"),
    ]
    dormant = conn.execute(
        "SELECT id, origin_project, source, dormant_reason FROM dormant_memories ORDER BY id"
    ).fetchall()
    assert dormant == [
        ("g_auto_local", "demo", f"auto-shared:demo:{ISO}", "unshared"),
        ("g_auto_named", "demo", f"auto-shared:demo:{ISO}", "unshared"),
    ]
    moves = conn.execute(
        "SELECT target_id, actor, metadata_json FROM audit_log WHERE op = 'dormant_move' ORDER BY target_id"
    ).fetchall()
    assert [(t, a, json.loads(m)) for t, a, m in moves] == [
        ("g_auto_local", "migration", {"reason": "unshared"}),
        ("g_auto_named", "migration", {"reason": "unshared"}),
    ]
