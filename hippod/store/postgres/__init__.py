"""The team tier's store on PostgreSQL: one database shared by a team's servers (docs/team.md).

`pg.py` opens the pool and runs each transaction under one tenant, `migrations.py` holds the schema
as numbered functions, and `memories.py` the memory rows with the same functions, names and results
as `hippod.store.sqlite.memories`, so recall scores both backends with one code path.
psycopg is imported only here, and only by a daemon that serves a team.
"""
