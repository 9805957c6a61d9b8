"""The team store's seventh migration: recall's candidates by their terms through the indexes, in
two functions that rank a tenant's matches by FTS5's bm25() (store/postgres/memories.py `candidates_fts`);
and its eighth, which tells the planner what the rank keys cost to compute.

PostgreSQL uses an index under a row-level security policy only for a leakproof operator, and the
terms' `&&` is not one: searched as the application role, every recall read the tenant's whole
table. The functions run as the tables' owner, for whom the policy of `memories` is no longer
forced, and name the tenant themselves, as the policy does (the transaction's `hippo.tenant`; none,
no rows); they return ranks and row numbers, and the caller reads the rows through the policy.

- `hippo_term_ranks(terms, idfs, ...)` ranks every match of any of the terms (through the GIN index
  on `terms`) and keeps the best `fetched`, with any tied with the last.
- `hippo_term_top(term, idf, ...)` gives the same for one term without ranking every row that holds
  it: a second GIN index files each memory under `hippo_rank_keys()`, one key per distinct term with
  the term's count in the memory (1, 2, or "3" for three or more) and the memory's length in terms
  (capped at RANK_KEY_LENGTHS). For one term, bm25 grows with the count and falls with the length,
  so the rows of a (count, length) key all score what that key's bound says (the capped length's
  key at most that), and the keys are read from the best bound down until `fetched` rows are found
  and the last of them scores more than the next key's bound: no row left unread can rank with them.
"""

from __future__ import annotations

from psycopg import AsyncConnection, sql

# Memories this long in terms or longer share their term's key (one GIN key per term and count).
RANK_KEY_LENGTHS = 64

# One query term's part of FTS5's bm25(): idf x f(k1+1) / (f + k1(1 - b + b D/avgdl)), in
# fts5_aux.c's order of operations, so the doubles match the SQLite store's.
_BM25 = "{idf} * (({n} * k1p1) / ({n} + k1 * (omb + b * {length} / avgdl)))"


def _term_score(i: str) -> str:
    """The score of row m for the i-th wanted term (an SQL subscript)."""
    n = f"cardinality(array_positions(m.terms, wanted[{i}]))::float8"
    return _BM25.format(idf=f"idfs[{i}]", n=n, length="m.nterms::float8")


def _ranks() -> str:
    """hippo_term_ranks(): summed over the terms in their order, from the first (as SQL's sum() over
    the terms as rows, which it is beyond three terms; written out up to three, to save a subquery
    per row)."""
    one, two, three = _term_score("1"), _term_score("2"), _term_score("3")
    n = "f.n"
    every = (
        f"(SELECT sum({_BM25.format(idf='q.idf', n=n, length='m.nterms::float8')} ORDER BY q.ord) "
        "FROM unnest(wanted, idfs) WITH ORDINALITY AS q(term, idf, ord), "
        "LATERAL (SELECT cardinality(array_positions(m.terms, q.term))::float8 AS n) f)"
    )
    return f"""CREATE FUNCTION hippo_term_ranks(
            wanted TEXT[], idfs FLOAT8[], k1p1 FLOAT8, k1 FLOAT8, omb FLOAT8, b FLOAT8, avgdl FLOAT8,
            fetched INTEGER)
        RETURNS TABLE (seq BIGINT, score FLOAT8)
        LANGUAGE sql STABLE SECURITY DEFINER ROWS 400 SET search_path = pg_catalog, public AS $$
            SELECT m.seq, CASE cardinality(wanted)
                WHEN 1 THEN {one}
                WHEN 2 THEN {one} + {two}
                WHEN 3 THEN {one} + {two} + {three}
                ELSE {every} END
            FROM memories m
            WHERE m.tenant_id = current_setting('hippo.tenant', true) AND m.terms && wanted
            ORDER BY 2 DESC FETCH FIRST fetched ROWS WITH TIES
        $$"""


_RANK_KEYS = f"""CREATE FUNCTION hippo_rank_keys(terms TEXT[], nterms INTEGER) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
        SELECT coalesce(array_agg(CASE WHEN u.n >= 3 THEN u.t || ' 3'
            ELSE u.t || ' ' || u.n || ' ' || least(nterms, {RANK_KEY_LENGTHS}) END), '{{}}')
        FROM (SELECT t, count(*) AS n FROM unnest(terms) AS t GROUP BY t) u
    $$"""


def _top() -> str:
    """hippo_term_top(): the keys of one term, best bound first; a key's rows are read whole."""
    n = "cardinality(array_positions(m.terms, wanted))::float8"
    row = _BM25.format(idf="idf", n=n, length="m.nterms::float8")
    bound = _BM25.format(idf="idf", n="c::float8", length="d::float8")
    return f"""CREATE FUNCTION hippo_term_top(
            wanted TEXT, idf FLOAT8, k1p1 FLOAT8, k1 FLOAT8, omb FLOAT8, b FLOAT8, avgdl FLOAT8,
            fetched INTEGER)
        RETURNS TABLE (seq BIGINT, score FLOAT8)
        LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 400 SET search_path = pg_catalog, public AS $$
        #variable_conflict use_column
        DECLARE
            rank_key RECORD;
            seqs BIGINT[] := '{{}}';
            scores FLOAT8[] := '{{}}';
            have INTEGER := 0;
            last FLOAT8;
        BEGIN
            FOR rank_key IN
                SELECT wanted || ' 3' AS name, 'Infinity'::float8 AS bound
                UNION ALL
                (SELECT wanted || ' ' || c || ' ' || d, {bound}
                 FROM generate_series(1, 2) c, generate_series(1, {RANK_KEY_LENGTHS}) d ORDER BY 2 DESC)
            LOOP
                EXIT WHEN last > rank_key.bound;
                SELECT seqs || array_agg(m.seq), scores || array_agg({row}) INTO seqs, scores
                FROM memories m
                WHERE m.tenant_id = current_setting('hippo.tenant', true)
                    AND hippo_rank_keys(m.terms, m.nterms) && ARRAY[rank_key.name];
                -- The score of the fetched-th best row so far, once there are that many.
                IF cardinality(scores) > have THEN
                    have := cardinality(scores);
                    IF have >= fetched THEN
                        SELECT s INTO last FROM unnest(scores) s ORDER BY s DESC OFFSET fetched - 1 LIMIT 1;
                    END IF;
                END IF;
            END LOOP;
            RETURN QUERY SELECT u.seq, u.score FROM unnest(seqs, scores) AS u(seq, score)
                ORDER BY 2 DESC FETCH FIRST fetched ROWS WITH TIES;
        END $$"""


async def m007_term_ranks(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """Recall's candidates through the indexes (see the module's docstring)."""
    await conn.execute("ALTER TABLE memories NO FORCE ROW LEVEL SECURITY")
    await conn.execute(_RANK_KEYS)
    await conn.execute(
        "CREATE INDEX memories_rank_keys ON memories USING gin (hippo_rank_keys(terms, nterms))"
    )
    await conn.execute(_ranks())
    await conn.execute(_top())
    for name, first in (("hippo_term_ranks", "TEXT[], FLOAT8[]"), ("hippo_term_top", "TEXT, FLOAT8")):
        signature = f"{name}({first}, FLOAT8, FLOAT8, FLOAT8, FLOAT8, FLOAT8, INTEGER)"
        await conn.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
        await conn.execute(
            sql.SQL(f"GRANT EXECUTE ON FUNCTION {signature} TO {{}}").format(sql.Identifier(role))
        )


# What the planner is told one call of hippo_rank_keys() costs, in units of cpu_operator_cost. At the
# default (100) it took the call for cheap, and on a server of several tenants it read a common term's
# keys through the tenant's index, computing every row's keys once per key: seconds for one query of
# one word over 3,000 memories, where the rank-key index answers in milliseconds. A call builds and
# groups the row's terms, tens of microseconds.
RANK_KEYS_COST = 10_000


async def m008_rank_keys_cost(conn: AsyncConnection[tuple[object, ...]], role: str) -> None:
    """hippo_rank_keys() at its real cost, so that its rows are found through its index."""
    await conn.execute(f"ALTER FUNCTION hippo_rank_keys(TEXT[], INTEGER) COST {RANK_KEYS_COST}")
