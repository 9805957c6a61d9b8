"""The SQLite store: its database, migrations and the SQL of each table."""
