"""A rejected text never comes back (memory-model.md §12): not in another spelling, not through
another verb, not from the global store in a project's reads, and not as bytes left in the database."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import project, query
from e2e.test_compaction import event, hook, summary_with, transcript

if TYPE_CHECKING:
    from e2e.harness import Hippo

TEXT = "Deploy the billing worker with the blue green script zq7"
# The same value as TEXT once normalised: a trailing full stop, a zero-width space, full-width
# letters (NFKC), a soft hyphen (a format character) and odd spacing.
SPELLINGS = [
    TEXT + ".",
    TEXT + " !?",
    "Deploy the billing\u200b worker with the blue green script zq7",
    "Deploy the ｂｉｌｌｉｎｇ worker with the blue green script zq7",
    "Deploy the bill\u00ading worker with the blue green script zq7",
    "  DEPLOY the billing\tworker with the blue green   script zq7 ",
]


def _recalled(hippo: Hippo, query_text: str, cwd: str) -> list[str]:
    return [r["content"] for r in hippo.json("recall", query_text, cwd=cwd)["results"]]


def _copies(db: str, needle: str) -> int:
    """How often the text's bytes occur in the database file and its WAL, after a checkpoint."""
    conn = sqlite3.connect(db)
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        assert busy == 0, "the checkpoint was blocked"
    finally:
        conn.close()
    found = 0
    for path in (db, db + "-wal"):
        if os.path.exists(path):
            found += Path(path).read_bytes().lower().count(needle.lower().encode())
    return found


def test_every_spelling_and_verb_of_a_rejected_text_is_refused(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo, "billing")
    first = hippo.json("remember", TEXT, cwd=folder)["id"]
    hippo.ok("reject", first, "--reason", "the script is gone", cwd=folder)

    for spelling in SPELLINGS:
        done = hippo.ctl("remember", spelling, cwd=folder)
        assert (done.returncode, done.stderr.count("\n")) == (1, 1), (spelling, done)
        assert "rejected earlier" in done.stderr
    for args in (("decide", TEXT), ("decide", TEXT + ".", "--context", "x")):
        done = hippo.ctl(*args, cwd=folder)
        assert done.returncode == 1 and "rejected earlier" in done.stderr, (args, done)
    assert hippo.json("decide", "list", cwd=folder)["decisions"] == []
    for args in (
        ("wm", "push", "--scope", "s", "--content", SPELLINGS[2]),
        ("session", "log", "--id", "s1", "--type", "note", "--content", SPELLINGS[0]),
        (
            "supersede",
            hippo.json("remember", "The billing worker runs hourly", cwd=folder)["id"],
            SPELLINGS[3],
        ),
    ):
        done = hippo.ctl(*args, cwd=folder)
        assert done.returncode == 1 and "rejected earlier" in done.stderr, (args, done)
    notes = Path(folder, "notes.md")
    notes.write_text("# Deploys\n\n- " + SPELLINGS[4] + "\n\n- The invoice queue drains every 5 minutes\n")
    imported = hippo.json("import", "--markdown", str(notes), cwd=folder)
    assert (imported["rejected"], imported["imported"]) == (1, 1), imported
    assert _recalled(hippo, "billing worker", folder) == ["The billing worker runs hourly"]


def test_a_project_rejection_hides_the_global_copy_in_that_project(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo, "billing")
    elsewhere = os.path.join(hippo.root, "elsewhere")
    os.makedirs(elsewhere)
    hippo.ok("remember", TEXT, "--global", cwd=folder)
    hippo.ok("remember", "The billing worker logs go to loki", cwd=folder)
    assert TEXT in _recalled(hippo, "billing worker", folder)

    done = hippo.ok("reject", "--value", TEXT + ".", "--reason", "wrong here", cwd=folder)
    assert "the global store still holds 1 copy" in done.stdout
    assert _recalled(hippo, "billing worker", folder) == ["The billing worker logs go to loki"]
    context = hippo.json("context", "billing worker", cwd=folder)
    assert TEXT not in json.dumps(context)
    # Other projects still see it: the rejection was made in this project only.
    assert _recalled(hippo, "billing worker", elsewhere) == [TEXT]
    synced = hippo.json("sync", cwd=folder)
    assert (synced["copied"], synced["rejected"]) == ([], 1)

    # Rejected in the global store, it leaves every project's reads.
    hippo.ok("reject", "--value", TEXT, "--reason", "wrong everywhere", "--global", cwd=folder)
    assert _recalled(hippo, "billing worker", elsewhere) == []
    refused = hippo.ctl("remember", TEXT + "!", "--global", cwd=elsewhere)
    assert refused.returncode == 1 and "rejected earlier" in refused.stderr


def test_reject_leaves_no_copy_of_the_text_in_the_database(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo, "billing")
    path = transcript(hippo)
    summary = summary_with([TEXT, "The invoice queue drains every 5 minutes"])
    hook(hippo, "post-compact", event("PostCompact", path, folder, compact_summary=summary), folder)
    saved = query(db, "SELECT id FROM memories WHERE content = ?", (TEXT,))
    assert len(saved) == 1
    decision = hippo.json("decide", TEXT, "--context", "agreed at the standup", cwd=folder)["decision"]
    hippo.ok("remember", "Keep the billing worker on two replicas", cwd=folder)
    assert _copies(db, TEXT) >= 4

    done = hippo.json("reject", saved[0][0], "--reason", "the script is gone", cwd=folder)
    assert sorted(done["removed"]) == sorted([saved[0][0], decision["memory_id"]])
    assert _copies(db, TEXT) == 0
    assert query(db, "SELECT n FROM decisions") == []
    (row,) = query(db, "SELECT summary, items_json FROM compactions")
    assert "invoice queue drains" in row[0] and TEXT not in row[0]
    items = json.loads(row[1])
    assert [i["outcome"] for i in items] == ["rejected", "saved"] and items[0]["text"] == ""
    assert _recalled(hippo, "billing worker", folder) == ["Keep the billing worker on two replicas"]

    # A later compaction that lists the text again keeps no copy of it either.
    hook(hippo, "post-compact", event("PostCompact", path, folder, compact_summary=summary), folder)
    assert _copies(db, TEXT) == 0
    hippo.stop()
    assert _copies(db, TEXT) == 0
