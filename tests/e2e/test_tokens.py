"""`tokens` (continuity.md §7) over ledger rows planted in a real global store, and the ledger's
90-day pruning by the global store's sleep."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = "2026-03-10T12:00:00.000Z"

# (ts, day, surface, kind, project, tokens, skipped)
ROWS = [
    ("2026-03-10T11:00:00.000+00:00", "2026-03-10", "prompt_hook", "sent", "proj", 1200, 0),
    ("2026-03-10T11:01:00.000+00:00", "2026-03-10", "prompt_hook", "sent", "proj", 1200, 1),
    ("2026-03-10T11:02:00.000+00:00", "2026-03-10", "prompt_hook", "sent", "proj", 1200, 1),
    ("2026-03-10T11:03:00.000+00:00", "2026-03-10", "prompt_hook", "reread", "proj", 36000, 0),
    ("2026-02-09T10:00:00.000+00:00", "2026-02-09", "context", "sent", "other", 800, 0),
    ("2026-03-01T10:00:00.000+00:00", "2026-03-01", "recall", "sent", "proj", 2500, 0),
    ("2026-03-01T10:00:00.000+00:00", "2026-03-01", "compact_resume", "sent", "proj", 300, 0),
    # Outside a 30-day window, and past the 90 days kept.
    ("2026-02-08T10:00:00.000+00:00", "2026-02-08", "context", "sent", "proj", 5000, 0),
    ("2025-12-01T10:00:00.000+00:00", "2025-12-01", "recall", "sent", "proj", 7000, 0),
]


def started(hippo: Hippo) -> str:
    hippo.start(env=dict(hippo.env, TZ="UTC"), fake_now=NOW)
    folder, _ = project(hippo)
    hippo.ok("status", "--global")
    conn = sqlite3.connect(hippo.db)
    with conn:
        conn.executemany(
            "INSERT INTO token_ledger (ts, day, tenant_id, surface, kind, session_id, project, store, "
            "tokens, items, skipped) VALUES (?, ?, 'default', ?, ?, 's1', ?, '/x', ?, 1, ?)",
            ROWS,
        )
        conn.execute(
            "INSERT INTO token_ledger (ts, day, tenant_id, surface, kind, project, store, tokens, items, "
            "skipped) VALUES ('2026-03-10T11:00:00.000+00:00', '2026-03-10', 'team-b', 'recall', 'sent', "
            "'proj', '/x', 99, 1, 0)"
        )
    conn.close()
    return folder


def test_table_and_json(hippo: Hippo) -> None:
    folder = started(hippo)
    text = hippo.ok("tokens", cwd=folder).stdout
    assert text == (
        "Memory tokens, last 30 days (estimates: characters / 4; "
        "re-reads usually bill at the cached-input rate)\n"
        "surface          sent    sends   re-read   skipped   saved\n"
        "prompt_hook     1,200        1    36,000         2     2,400\n"
        "compact_resume    300        1         0         -         -\n"
        "context           800        1         -         -         -\n"
        "recall          2,500        1         -         -         -\n"
        "mcp                 0        0         -         -         -\n"
        "http                0        0         -         -         -\n"
        "total           4,800        4    36,000         2     2,400\n"
    )
    data = hippo.json("tokens", "--days", "7", cwd=folder)
    assert (data["days"], data["since"]) == (7, "2026-03-04")
    assert data["surfaces"]["prompt_hook"] == {
        "sent": 1200,
        "sends": 1,
        "reread": 36000,
        "skipped": 2,
        "saved": 2400,
    }
    assert data["surfaces"]["recall"] == {
        "sent": 0,
        "sends": 0,
        "reread": None,
        "skipped": None,
        "saved": None,
    }
    assert data["total"] == {"sent": 1200, "sends": 1, "reread": 36000, "skipped": 2, "saved": 2400}


def test_here_counts_only_this_project_and_days_one(hippo: Hippo) -> None:
    folder = started(hippo)
    data = hippo.json("tokens", "--here", cwd=folder)
    assert data["project"] == "proj"
    assert data["surfaces"]["context"]["sent"] == 0 and data["total"]["sent"] == 4000
    first = hippo.ok("tokens", "--days", "1", "--here", cwd=folder).stdout.splitlines()[0]
    assert first.startswith("Memory tokens, last 1 day in proj (")


def test_each_tenant_sees_its_own_rows(hippo: Hippo) -> None:
    folder = started(hippo)
    done = hippo.ctl("--json", "tokens", cwd=folder, env=dict(hippo.env, HIPPO_TENANT="team-b"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["total"] == {"sent": 99, "sends": 1, "reread": 0, "skipped": 0, "saved": 0}


def test_bad_days(hippo: Hippo) -> None:
    folder = started(hippo)
    done = hippo.ctl("tokens", "--days", "0", cwd=folder)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == "hippoctl: error: --days must be 1 or more"
    huge = hippo.ctl("tokens", "--days", str(2**70), cwd=folder)
    assert (huge.returncode, huge.stdout) == (2, "")
    assert huge.stderr.strip() == f"hippoctl: error: --days is out of range: {2**70}"


def test_global_sleep_prunes_rows_past_90_days(hippo: Hippo) -> None:
    folder = started(hippo)
    hippo.ok("sleep", cwd=folder)
    assert len(query(hippo.db, "SELECT * FROM token_ledger")) == len(ROWS) + 1
    hippo.ok("sleep", "--global", cwd=folder)
    days = sorted({r[0] for r in query(hippo.db, "SELECT day FROM token_ledger")})
    assert days == ["2026-02-08", "2026-02-09", "2026-03-01", "2026-03-10"]
