"""The team store's schema as plain numbered functions, each run in its own transaction.

After migration N, `schema_version.version` holds N. Add a migration by appending a function to
MIGRATIONS; never edit one that has shipped. Two servers starting at once take turns behind an
advisory lock, so each migration runs once.

The memory columns and their types follow the SQLite store's (timestamps as ISO text, lists as JSON
text), so both backends read a row into the same `Memory` with the same code. Two columns are the
team store's own: `terms`, the memory's index terms (content then tags) as an array under a GIN
index, which stands in for FTS5, and `seq`, the order memories were stored in, which stands in for
the rowid. `term_stats` and `tenant_stats` hold what FTS5 keeps for its bm25(): how many rows hold
each term, and the rows and terms of each tenant, kept by triggers in the same transaction.

Every table is partitioned by `tenant_id` under row-level security: the server works as APP_ROLE,
which sees only the rows of the tenant its transaction names in `hippo.tenant` (pg.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from psycopg import AsyncConnection, sql

from hippod.store.postgres.migration_term_ranks import m007_term_ranks, m008_rank_keys_cost

# The role every request runs as (SET LOCAL ROLE): not a superuser and not the tables' owner, so
# row-level security applies to it whoever the server logs in as.
APP_ROLE = "hippo_team_app"
# Any fixed number: the key of the advisory lock migrations run behind.
MIGRATION_LOCK = 0x4869_7070_6F64

Migration = Callable[[AsyncConnection[tuple[object, ...]], str], Awaitable[None]]


async def m001_initial(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """Memories with their index terms, the term statistics, the audit log, tombstones and meta."""
    for statement in (
        """CREATE TABLE memories (
            seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
            id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            content TEXT NOT NULL,
            layer TEXT NOT NULL DEFAULT 'episodic',
            kind TEXT NOT NULL DEFAULT 'distilled',
            created TEXT NOT NULL,
            valid_from TEXT NOT NULL,
            last_retrieved TEXT NOT NULL,
            retrieval_count INTEGER NOT NULL DEFAULT 0,
            half_life_days DOUBLE PRECISION NOT NULL,
            strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
            emotional_valence TEXT NOT NULL DEFAULT 'neutral',
            schema_fit DOUBLE PRECISION NOT NULL DEFAULT 0.5,
            tags TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT 'cli',
            confidence TEXT NOT NULL DEFAULT 'verified',
            pinned INTEGER NOT NULL DEFAULT 0,
            outcome_positive INTEGER NOT NULL DEFAULT 0,
            outcome_negative INTEGER NOT NULL DEFAULT 0,
            outcome_score INTEGER,
            conflicts_with TEXT NOT NULL DEFAULT '[]',
            parents TEXT NOT NULL DEFAULT '[]',
            merged_into TEXT,
            superseded_by TEXT,
            scope TEXT,
            owner TEXT,
            artifact_ref TEXT,
            origin_project TEXT,
            source_session_id TEXT,
            compaction_id TEXT,
            trace_outcome TEXT,
            extracted_from TEXT,
            legacy_base INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            content_digest TEXT NOT NULL,
            terms TEXT[] NOT NULL,
            nterms INTEGER NOT NULL,
            -- Per tenant: one tenant cannot learn from a refused insert which ids another holds.
            PRIMARY KEY (tenant_id, id)
        )""",
        "CREATE INDEX memories_terms ON memories USING gin (terms)",
        "CREATE INDEX memories_digest ON memories (tenant_id, content_digest)",
        "CREATE INDEX memories_tenant_layer ON memories (tenant_id, layer)",
        """CREATE TABLE term_stats (
            tenant_id TEXT NOT NULL,
            term TEXT NOT NULL,
            rows BIGINT NOT NULL,
            PRIMARY KEY (tenant_id, term)
        )""",
        """CREATE TABLE tenant_stats (
            tenant_id TEXT PRIMARY KEY,
            rows BIGINT NOT NULL,
            tokens BIGINT NOT NULL
        )""",
        # Terms are counted in sorted order, so two writers that share terms lock them in one order.
        """CREATE FUNCTION hippo_count_terms(tenant TEXT, terms TEXT[], tokens INTEGER, delta INTEGER)
        RETURNS void LANGUAGE sql AS $$
            INSERT INTO term_stats (tenant_id, term, rows)
                SELECT tenant, t, delta FROM (SELECT DISTINCT unnest(terms) AS t) u ORDER BY t
                ON CONFLICT (tenant_id, term) DO UPDATE SET rows = term_stats.rows + excluded.rows;
            INSERT INTO tenant_stats (tenant_id, rows, tokens) VALUES (tenant, delta, delta * tokens)
                ON CONFLICT (tenant_id) DO UPDATE
                SET rows = tenant_stats.rows + excluded.rows, tokens = tenant_stats.tokens + excluded.tokens;
        $$""",
        """CREATE FUNCTION hippo_memory_stats() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                PERFORM hippo_count_terms(OLD.tenant_id, OLD.terms, OLD.nterms, -1);
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                PERFORM hippo_count_terms(NEW.tenant_id, NEW.terms, NEW.nterms, 1);
            END IF;
            RETURN NULL;
        END $$""",
        """CREATE TRIGGER memories_stats_insert AFTER INSERT ON memories
            FOR EACH ROW EXECUTE FUNCTION hippo_memory_stats()""",
        """CREATE TRIGGER memories_stats_delete AFTER DELETE ON memories
            FOR EACH ROW EXECUTE FUNCTION hippo_memory_stats()""",
        """CREATE TRIGGER memories_stats_update AFTER UPDATE OF terms, tenant_id ON memories
            FOR EACH ROW WHEN (OLD.terms IS DISTINCT FROM NEW.terms OR OLD.tenant_id != NEW.tenant_id)
            EXECUTE FUNCTION hippo_memory_stats()""",
        """CREATE TABLE audit_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            ts TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            op TEXT NOT NULL,
            target_id TEXT,
            metadata_json TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE INDEX audit_log_tenant_ts ON audit_log (tenant_id, ts)",
        """CREATE TABLE rejected_values (
            tenant_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            reason TEXT NOT NULL,
            rejected_by TEXT NOT NULL,
            rejected_at TEXT NOT NULL,
            source_memory_id TEXT,
            normalized_chars INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, digest)
        )""",
        """CREATE TABLE meta (
            tenant_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (tenant_id, key)
        )""",
    ):
        await conn.execute(statement)
    await _role(conn, role)
    for table in ("memories", "term_stats", "tenant_stats", "audit_log", "rejected_values", "meta"):
        await _tenant_only(conn, table, role)


async def _tenant_only(conn: AsyncConnection[tuple[object, ...]], table: str, role: str) -> None:
    """Row-level security on a table with a tenant_id, forced on its owner too; the role may use it."""
    name = sql.Identifier(table)
    await conn.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name))
    await conn.execute(sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(name))
    # current_setting(..., true) is NULL when no tenant was named: such a transaction sees nothing.
    await conn.execute(
        sql.SQL(
            "CREATE POLICY tenant_only ON {} USING (tenant_id = current_setting('hippo.tenant', true)) "
            "WITH CHECK (tenant_id = current_setting('hippo.tenant', true))"
        ).format(name)
    )
    await conn.execute(
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(name, sql.Identifier(role))
    )


async def _role(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """Create the application role once per cluster (roles are not per database) and let the
    login user act as it. Several databases of one cluster share it; each grants on its own tables."""
    await conn.execute(
        sql.SQL(
            "DO $$ BEGIN CREATE ROLE {} NOLOGIN; "
            "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
        ).format(sql.Identifier(role))
    )
    await conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(sql.Identifier(role)))


async def m002_keys_and_archive(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """The HTTP API's keys, per tenant, and the one lookup that crosses tenants: a key by its id;
    the archive of raw rows.

    A request's tenant is known only once its key is, so `hippo_api_key(key_id)` finds the key's row
    whatever the tenant, as the tables' owner (SECURITY DEFINER). Row-level security is on for
    the application role (not forced on the owner), so nothing else reads another tenant's keys.
    """
    for statement in (
        """CREATE TABLE api_keys (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            key_id TEXT NOT NULL UNIQUE,
            key_hash TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            label TEXT,
            role TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        "CREATE INDEX api_keys_tenant ON api_keys (tenant_id, id)",
        "ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY tenant_only ON api_keys USING (tenant_id = current_setting('hippo.tenant', true)) "
        "WITH CHECK (tenant_id = current_setting('hippo.tenant', true))",
        """CREATE FUNCTION hippo_api_key(wanted TEXT)
        RETURNS TABLE (id BIGINT, key_id TEXT, key_hash TEXT, tenant_id TEXT, label TEXT, role TEXT,
                       created_at TEXT, revoked_at TEXT)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
            SELECT id, key_id, key_hash, tenant_id, label, role, created_at, revoked_at
            FROM api_keys WHERE key_id = wanted
        $$""",
        "REVOKE ALL ON FUNCTION hippo_api_key(TEXT) FROM PUBLIC",
        # An archived raw row's metadata (never its content), as in the SQLite store.
        """CREATE TABLE raw_archive (
            memory_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            archived_at TEXT NOT NULL,
            reason TEXT NOT NULL,
            metadata_json TEXT NOT NULL,
            PRIMARY KEY (tenant_id, memory_id)
        )""",
    ):
        await conn.execute(statement)
    await _tenant_only(conn, "raw_archive", role)
    who = sql.Identifier(role)
    await conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION hippo_api_key(TEXT) TO {}").format(who))
    await conn.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE ON api_keys TO {}").format(who))


async def m003_changes(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """What changed since a member's last sync (store/postgres/changes.py): each memory row carries
    the id of the transaction that last wrote it, and a deleted row leaves its id in
    `memory_deletions`, stamped the same way. Transaction ids, unlike a sequence, tell a reader
    which writes might still commit behind it: every one older than its snapshot's xmin has."""
    for statement in (
        "ALTER TABLE memories ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()",
        "CREATE INDEX memories_changes ON memories (tenant_id, changed_xid, id)",
        """CREATE TABLE memory_deletions (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            deleted_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            PRIMARY KEY (tenant_id, id)
        )""",
        "CREATE INDEX memory_deletions_changes ON memory_deletions (tenant_id, deleted_xid)",
        """CREATE FUNCTION hippo_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                INSERT INTO memory_deletions (tenant_id, id) VALUES (OLD.tenant_id, OLD.id)
                    ON CONFLICT (tenant_id, id) DO UPDATE SET deleted_xid = pg_current_xact_id();
                RETURN OLD;
            END IF;
            IF TG_OP = 'INSERT' THEN
                DELETE FROM memory_deletions WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
            END IF;
            NEW.changed_xid := pg_current_xact_id();
            RETURN NEW;
        END $$""",
        """CREATE TRIGGER memories_changed BEFORE INSERT OR UPDATE ON memories
            FOR EACH ROW EXECUTE FUNCTION hippo_memory_changed()""",
        """CREATE TRIGGER memories_deleted AFTER DELETE ON memories
            FOR EACH ROW EXECUTE FUNCTION hippo_memory_changed()""",
    ):
        await conn.execute(statement)
    await _tenant_only(conn, "memory_deletions", role)


async def m004_sleep(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """What sleep keeps beside the memories: conflicts between them, the dormant store (a memory row
    moved whole, its index terms with it, so a restore puts it back as it was) and each run's results."""
    for statement in (
        """CREATE TABLE memory_conflicts (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            memory_a_id TEXT NOT NULL,
            memory_b_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            score DOUBLE PRECISION NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',
            resolved_by TEXT,
            detected_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (tenant_id, memory_a_id, memory_b_id),
            -- In byte order, as Python compares the two ids.
            CHECK (memory_a_id < memory_b_id COLLATE "C")
        )""",
        """CREATE TABLE dormant_memories (
            LIKE memories INCLUDING DEFAULTS EXCLUDING IDENTITY,
            dormant_at TEXT NOT NULL,
            dormant_reason TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id)
        )""",
        # A dormant row has no place in the memories' order (seq stays NULL): restored, a memory
        # takes a new one.
        "ALTER TABLE dormant_memories ALTER COLUMN seq DROP NOT NULL",
        "CREATE INDEX dormant_digest ON dormant_memories (tenant_id, content_digest)",
        """CREATE TABLE consolidation_runs (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            ts TEXT NOT NULL,
            results_json TEXT NOT NULL
        )""",
        "CREATE INDEX consolidation_runs_tenant ON consolidation_runs (tenant_id, id)",
    ):
        await conn.execute(statement)
    for table in ("memory_conflicts", "dormant_memories", "consolidation_runs"):
        await _tenant_only(conn, table, role)


async def m005_tenants(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """`hippo_tenants()`: every tenant a key was ever made for, and `default` (the operator's), for the
    daily run, which sleeps each. The other lookup that crosses tenants, as the keys' owner."""
    await conn.execute(
        """CREATE FUNCTION hippo_tenants() RETURNS SETOF TEXT
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
            SELECT tenant_id FROM api_keys UNION SELECT 'default' ORDER BY 1
        $$"""
    )
    await conn.execute("REVOKE ALL ON FUNCTION hippo_tenants() FROM PUBLIC")
    await conn.execute(
        sql.SQL("GRANT EXECUTE ON FUNCTION hippo_tenants() TO {}").format(sql.Identifier(role))
    )


async def m006_mark_batches(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """The batches of marks already applied, by the key their laptop sent them with, so a batch sent
    again (its answer lost) is applied once; kept 30 days (store/postgres/mark_batches.py)."""
    await conn.execute(
        """CREATE TABLE mark_batches (
            tenant_id TEXT NOT NULL,
            batch_key TEXT NOT NULL,
            applied_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, batch_key)
        )"""
    )
    await conn.execute("CREATE INDEX mark_batches_at ON mark_batches (tenant_id, applied_at)")
    await _tenant_only(conn, "mark_batches", role)


MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_keys_and_archive,
    m003_changes,
    m004_sleep,
    m005_tenants,
    m006_mark_batches,
    m007_term_ranks,
    m008_rank_keys_cost,
]


async def migrate(conn: AsyncConnection[tuple[object, ...]], role: str = APP_ROLE) -> int:
    """Bring the database to the newest schema; the version it is at afterwards."""
    await conn.set_autocommit(True)
    await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = await (await conn.execute("SELECT max(version) FROM schema_version")).fetchone()
        version = int(row[0]) if row and row[0] is not None else 0  # type: ignore[call-overload]
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            async with conn.transaction():
                await migration(conn, role)
                await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (number,))
            version = number
        return version
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
