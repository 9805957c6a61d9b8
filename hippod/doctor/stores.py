"""The Stores check: each store's database read through a read-only SQLite connection.

The file is opened with `mode=ro` and never through the store registry, which would migrate it; SQLite
may leave empty `-wal`/`-shm` files beside a WAL database, and that is all.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hippoctl.protocol.replies_doctor import FAIL, WARN, Check, StoreCounts
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.doctor import Findings, hippoctl
from hippod.store.config import ConfigFile, mirror_layout
from hippod.store.roots import DB_NAME
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.backup import BACKUP_DIR
from hippod.store.sqlite.migrations import SCHEMA_VERSION
from hippod.store.sqlite.prepare import APPLICATION_ID

# A compaction row still pending this long after pre-compact never got its post-compact (ingest.md §8).
PENDING_MINUTES = 10
# Past this many memories, one mirror file each costs a project that commits them (bench/RESULTS.md,
# "Mirrors: what a million files cost"): doctor suggests the day layout.
MANY_MIRRORS = 100_000
_SHOWN_PROBLEMS = 3
# What `hippoctl backup` names a backup in a store's backups/ folder (store/sqlite/backup.py).
_BACKUP_NAME = re.compile(r"hippo-(\d{8}T\d{6})(?:-(\d+))?\.db")


@dataclass
class StoreFacts:
    """What a read-only look at one store found."""

    root: str
    kind: str  # global or project
    exists: bool = False
    error: str | None = None  # the database could not be opened or read
    corrupt: bool = False  # SQLite could not read the file as a database (sqlite_errors)
    application_id: int | None = None
    tables: int = 0
    schema: int | None = None
    problems: list[str] = field(default_factory=list)  # quick_check lines other than "ok"
    fts5_compiled: bool = True
    fts5_table: bool = True
    last_sleep: str | None = None
    oldest_memory: str | None = None
    stale_compactions: int = 0  # pending compaction rows older than PENDING_MINUTES
    counts: StoreCounts | None = None
    backup: str | None = None  # the newest file `hippoctl backup` left in the store's backups/

    @property
    def db(self) -> str:
        return os.path.join(self.root, DB_NAME)

    @property
    def foreign(self) -> bool:
        return self.application_id not in (None, APPLICATION_ID) or (
            self.application_id == 0 and self.tables > 0
        )

    @property
    def readable(self) -> bool:
        """Opened, ours, not newer than this hippod and intact: its tables can be trusted."""
        return (
            self.exists
            and self.error is None
            and self.application_id == APPLICATION_ID
            and self.schema is not None
            and self.schema <= SCHEMA_VERSION
            and not self.problems
        )

    @property
    def project_dir(self) -> str | None:
        return os.path.dirname(self.root) if self.kind == "project" else None


def open_readonly(path: str) -> sqlite3.Connection:
    """A connection that cannot write: SQLite refuses every change through it."""
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=5.0, isolation_level=None, check_same_thread=False)


def inspect(root: str, kind: str, now: datetime | None = None) -> StoreFacts:
    """Read the store at `root` without changing it (blocking; run it in a worker thread)."""
    facts = StoreFacts(root=root, kind=kind, backup=newest_backup(root))
    facts.exists = os.path.isfile(facts.db)
    if not facts.exists:
        return facts
    try:
        conn = open_readonly(facts.db)
    except sqlite3.Error as exc:
        facts.error = str(exc)
        return facts
    try:
        _read(conn, facts, now or clock.now())
    except sqlite3.Error as exc:
        facts.error = str(exc)
        facts.corrupt = sqlite_errors.is_corrupt(exc)
    finally:
        conn.close()
    return facts


def newest_backup(root: str) -> str | None:
    """The newest backup `hippoctl backup` wrote into the store's backups/ folder, or None."""
    folder = os.path.join(root, BACKUP_DIR)
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    found = [(m[1], int(m[2] or 1), name) for name in names if (m := _BACKUP_NAME.fullmatch(name))]
    return os.path.join(folder, max(found)[2]) if found else None


def _restore_fix(facts: StoreFacts) -> str:
    """How to put a backup back in place of the store: the newest one when there is one."""
    where = facts.project_dir
    if facts.backup is not None:
        args = ("restore", facts.backup) if where else ("restore", facts.backup, "--global")
        return f"{hippoctl(*args, directory=where)} (the newest backup there)"
    prefix = hippoctl(directory=where)
    return f"{prefix} restore <backup>{'' if where else ' --global'} (a copy `hippoctl backup` wrote)"


def _row(conn: sqlite3.Connection, sql: str, args: tuple[object, ...] = ()) -> Any:
    row = conn.execute(sql, args).fetchone()
    return None if row is None else row[0]


def _number(conn: sqlite3.Connection, sql: str, args: tuple[object, ...] = ()) -> int:
    value = _row(conn, sql, args)
    return int(value) if isinstance(value, int) else 0


def _text(conn: sqlite3.Connection, sql: str) -> str | None:
    value = _row(conn, sql)
    return value if isinstance(value, str) and value else None


def _read(conn: sqlite3.Connection, facts: StoreFacts, now: datetime) -> None:
    facts.application_id = _number(conn, "PRAGMA application_id")
    facts.schema = _number(conn, "PRAGMA user_version")
    facts.tables = _number(conn, "SELECT count(*) FROM sqlite_master")
    if facts.foreign or facts.schema > SCHEMA_VERSION or facts.tables == 0:
        return
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        rows = [str(exc)]
    facts.problems = [r for r in rows if r != "ok"]
    facts.fts5_compiled = bool(_row(conn, "SELECT sqlite_compileoption_used('ENABLE_FTS5')"))
    facts.fts5_table = _has_table(conn, "memories_fts")
    if facts.problems:
        return
    facts.last_sleep = _text(conn, "SELECT value FROM meta WHERE key = 'last_sleep'")
    facts.oldest_memory = _text(conn, "SELECT min(created) FROM memories")
    if _has_table(conn, "compactions"):
        cutoff = clock.iso(now - timedelta(minutes=PENDING_MINUTES))
        facts.stale_compactions = _number(
            conn, "SELECT count(*) FROM compactions WHERE status = 'pending' AND started_at < ?", (cutoff,)
        )
    facts.counts = _counts(conn, facts)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return _number(conn, "SELECT count(*) FROM sqlite_master WHERE name = ?", (name,)) == 1


def _counts(conn: sqlite3.Connection, facts: StoreFacts) -> StoreCounts:
    """Rows per layer, pinned, dormant and conflicts, over every tenant: numbers, never text."""
    counts = StoreCounts(path=facts.root, kind=facts.kind, schema=facts.schema)
    for layer, number in conn.execute("SELECT layer, count(*) FROM memories GROUP BY layer"):
        counts.layers[str(layer)] = int(number)
    counts.memories = sum(counts.layers.values())
    counts.pinned = _number(conn, "SELECT count(*) FROM memories WHERE pinned = 1")
    if _has_table(conn, "dormant_memories"):
        counts.dormant = _number(conn, "SELECT count(*) FROM dormant_memories")
    if _has_table(conn, "memory_conflicts"):
        counts.conflicts_total = _number(conn, "SELECT count(*) FROM memory_conflicts")
        counts.conflicts_open = _number(conn, "SELECT count(*) FROM memory_conflicts WHERE status = 'open'")
    if _has_table(conn, "embeddings"):
        for model, number in conn.execute("SELECT model, count(*) FROM embeddings GROUP BY model"):
            counts.vectors[str(model)] = int(number)
    return counts


def counts_of(facts: StoreFacts) -> StoreCounts:
    """The store's counts, or an entry saying why there are none."""
    if facts.counts is not None:
        return facts.counts
    reason = "no database yet" if not facts.exists else (facts.error or "not readable (see doctor)")
    return StoreCounts(path=facts.root, kind=facts.kind, error=reason, schema=facts.schema)


def check_name(kind: str) -> str:
    return "Global store" if kind == "global" else "Project store"


def store_check(facts: StoreFacts) -> list[Check]:
    """Cannot open, foreign application id, schema behind or ahead, quick_check not ok, FTS5 missing."""
    found = Findings(check_name(facts.kind))
    where = facts.project_dir
    status_cmd = hippoctl("status", directory=where) if where else hippoctl("status", "--global")
    if not facts.exists:
        if facts.kind == "global":
            found.add(WARN, f"no global store yet at {facts.root}", hippoctl("init", "--global"))
        else:
            found.add(FAIL, f"no store at {facts.root}", hippoctl("init", directory=where))
        return found.checks("")
    if facts.corrupt:
        # hippod sets the file aside and opens it again once it is replaced.
        fresh = f"run: {hippoctl('init', directory=where)}" if where else "hippod starts an empty store there"
        fix = _restore_fix(facts)
        if facts.backup is None:
            aside = f"mv {shlex.quote(facts.db)} {shlex.quote(facts.db + '.corrupt')}"
            fix += f"; without one, {aside}, then {fresh}" if where else f"; without one, {aside}: {fresh}"
        found.add(FAIL, f"store {facts.db} is corrupt ({facts.error})", fix)
    elif facts.error is not None:
        found.add(
            FAIL,
            f"cannot open {facts.db}: {facts.error}",
            f"check the file's owner and permissions, then run: {status_cmd}",
        )
    elif facts.foreign:
        found.add(
            FAIL,
            f"{facts.db} was not written by hippod (application id {facts.application_id:#x})",
            f"move {facts.db} aside, then run: {hippoctl('init', directory=where) if where else status_cmd}",
        )
    elif facts.schema is not None and facts.schema > SCHEMA_VERSION:
        found.add(
            FAIL,
            f"{facts.db} has schema {facts.schema}; this hippod knows schema {SCHEMA_VERSION} at most",
            "pip install -U hippod, then run: hippoctl daemon restart",
        )
    elif facts.problems:
        shown = "; ".join(facts.problems[:_SHOWN_PROBLEMS])
        more = len(facts.problems) - _SHOWN_PROBLEMS
        found.add(
            FAIL,
            f"{facts.db} failed quick_check: {shown}" + (f" (and {more} more)" if more > 0 else ""),
            f"hippoctl daemon stop, then: sqlite3 {facts.db} .recover | sqlite3 {facts.db}.recovered "
            f"and put {facts.db}.recovered in its place"
            + ("" if facts.backup is None else f"; or restore a backup: {_restore_fix(facts)}"),
        )
    else:
        _softer(found, facts, status_cmd)
    return found.checks(f"{facts.db} (schema {facts.schema}, quick_check ok)")


def _softer(found: Findings, facts: StoreFacts, status_cmd: str) -> None:
    """The warnings of a store that opened, is ours and is intact."""
    if facts.schema is not None and facts.schema < SCHEMA_VERSION:
        found.add(
            WARN,
            f"{facts.db} has schema {facts.schema}; hippod migrates it to {SCHEMA_VERSION} when it opens it",
            status_cmd,
        )
    if not facts.fts5_compiled:
        found.add(
            WARN,
            "this Python's SQLite has no FTS5; recall falls back to a slower scan",
            "run hippod with a Python whose SQLite has FTS5, then: hippoctl daemon restart",
        )
    elif not facts.fts5_table and facts.tables > 0:
        found.add(WARN, f"{facts.db} has no full-text index yet", status_cmd)
    _mirror_advice(found, facts)


def _mirror_advice(found: Findings, facts: StoreFacts) -> None:
    """A store past MANY_MIRRORS memories that keeps a mirror file each: the day layout's setting."""
    memories = facts.counts.memories if facts.counts is not None else 0
    if memories < MANY_MIRRORS:
        return
    config = ConfigFile(facts.root)
    try:
        layout = mirror_layout(config.current())
    except HippoError:
        return  # a config.json that does not parse: the Config check says so
    if layout == "memory":
        found.add(
            WARN,
            f"{memories:,} memories make as many mirror files in {facts.root}",
            f'set "mirrors": {{"layout": "day"}} in {config.path} for one file per layer and day',
        )
