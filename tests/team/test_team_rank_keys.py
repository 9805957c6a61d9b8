"""A term's rows on a team server of several tenants are found through the rank-key index
(migration_term_ranks.py): the planner, told what a call of hippo_rank_keys() costs, does not read the
tenant's rows through its own index and compute every row's keys for each key it looks up."""

from __future__ import annotations

import json
from typing import Any

import psycopg
from e2e.stop_support import texts
from psycopg import sql

from hippod.model.terms import terms
from hippod.store.postgres.pg import TeamDatabase
from team.support import store_rows

# Three tenants of this many rows: at the planner's default cost for a function, reading a tenant's
# rows through its own index and computing their keys looked cheaper than the rank keys' index.
ROWS_EACH = 3000
# One of hippo_term_top()'s lookups (store/postgres/migration_term_ranks.py), on the policy's tenant,
# its key a parameter: PL/pgSQL plans it once for every key (a generic plan), not knowing the key.
_LOOKUP = (
    "PREPARE lookup(TEXT) AS SELECT m.seq FROM memories m "
    "WHERE m.tenant_id = current_setting('hippo.tenant', true) "
    "AND hippo_rank_keys(m.terms, m.nterms) && ARRAY[$1]"
)


def _indexes(plan: dict[str, Any]) -> set[str]:
    """The indexes a plan (EXPLAIN's JSON) reads, at any depth."""
    found = {plan["Index Name"]} if "Index Name" in plan else set()
    for child in plan.get("Plans", []):
        found |= _indexes(child)
    return found


async def test_a_terms_rank_keys_are_read_through_their_index_among_several_tenants(
    team_db: TeamDatabase, pg_dsn: str, tenant: str
) -> None:
    lines = texts(ROWS_EACH, seed=11)
    for owner in (tenant, tenant + "_b", tenant + "_c"):
        await store_rows(team_db, owner, *lines)
    word = terms(lines[0])[0]  # as the rows are filed: the first of a memory of 12 terms
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute("ANALYZE memories")  # as autovacuum does after a load
        with admin.transaction():
            admin.execute("SELECT set_config('hippo.tenant', %s, true)", (tenant,))
            admin.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            admin.execute(_LOOKUP)
            key = sql.Literal(f"{word} 1 12")
            explain = sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE lookup({})").format(key)
            [(explained,)] = admin.execute(explain).fetchall()
            found = admin.execute(sql.SQL("EXECUTE lookup({})").format(key)).fetchall()
            admin.execute("DEALLOCATE lookup")
    plan = explained[0]["Plan"]  # psycopg reads a json column as Python objects
    assert "memories_rank_keys" in _indexes(plan), json.dumps(plan, indent=1)
    assert found  # the key is one the tenant's rows are filed under
