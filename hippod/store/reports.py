"""The reads of `status` and `export` on a SQLite store: the `ReportRows` of store/backend.py, whose
team twin is hippod/team/reports.py."""

from hippod.store.conflicts import count_open as count_open
from hippod.store.imports import exported as exported
from hippod.store.memories import all_meta as all_meta
from hippod.store.memories import status_rows as status_rows
