"""A sleep asked for by a tenant's key covers that tenant alone: it plans and writes its rows only, and
its report names nothing of another tenant (integrations.md §9.5); the owner's sleep covers them all."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from hippo_memory import HippoSync

from e2e.http_support import create_key, serve

if TYPE_CHECKING:
    from e2e.harness import Hippo

ALPHA = "alpha secret quokkaplan: the payroll export runs from the finance jump host"
BETA = "beta deploys go through the canary fleet before the main cluster"
VARIANTS = ("", " again", " again today", " once more", " as before", " this week")
# Every table a sleep reads or writes rows of, by tenant.
TABLES = ("memories", "dormant_memories", "memory_conflicts", "audit_log", "rejected_values")


def _rows(db: str, tenant: str) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        found = {
            t: conn.execute(f"SELECT * FROM {t} WHERE tenant_id = ? ORDER BY 1", (tenant,)).fetchall()
            for t in TABLES
        }
        found["meta"] = conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('last_sleep', 'sleep_count') ORDER BY key"
        ).fetchall()
    return found


def test_a_tenants_sleep_touches_and_reports_that_tenant_alone(hippo: Hippo) -> None:
    url = serve(hippo)
    alpha, beta = (
        create_key(hippo, tenant="alpha", role="admin"),
        create_key(hippo, tenant="beta", role="admin"),
    )
    with HippoSync(base_url=url, api_key=alpha) as a:
        for tail in VARIANTS:
            a.remember(content=ALPHA + tail)
    with HippoSync(base_url=url, api_key=beta) as b:
        for tail in VARIANTS[:3]:
            b.remember(content=BETA + tail)
        before = _rows(hippo.db, "alpha")
        dry = b.sleep(dry_run=True)
        slept = b.sleep(no_share=True)
    assert _rows(hippo.db, "alpha") == before  # every row of alpha as it was, and the store's own marks
    for reply in (dry, slept):
        text = json.dumps(reply.model_dump(mode="json"))
        assert "quokkaplan" not in text and "payroll" not in text and "alpha" not in text, text
        assert reply.merged_episodic == 3 and reply.new_semantic == 1
    with sqlite3.connect(hippo.db) as conn:
        merged = conn.execute(
            "SELECT count(*) FROM memories WHERE tenant_id = 'beta' AND layer = 'semantic'"
        ).fetchone()[0]
        runs = conn.execute("SELECT tenant_id FROM consolidation_runs").fetchall()
    assert merged == 1 and runs == [("beta",)]
    # The owner's sleep is the whole store's: alpha's six merge now (so they could have before).
    whole = hippo.json("sleep", "--global", "--no-share")
    assert whole["merged"] == 6
    with sqlite3.connect(hippo.db) as conn:
        assert conn.execute("SELECT tenant_id FROM consolidation_runs ORDER BY id").fetchall() == [
            ("beta",),
            (None,),
        ]
