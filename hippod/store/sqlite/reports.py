"""The reads of `status` and `export` on a SQLite store: the `ReportRows` of store/backend.py, whose
team twin is hippod/store/postgres/reports.py."""

from hippod.store.sqlite.conflicts import count_open as count_open
from hippod.store.sqlite.imports import exported as exported
from hippod.store.sqlite.memories import all_meta as all_meta
from hippod.store.sqlite.memories import status_rows as status_rows
