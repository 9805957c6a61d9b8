"""Sleep end to end: the report, dry run, protection, decay to dormant, retention, merge and dedupe."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import files, make, plant, project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

JSON_KEYS = {
    "dry_run", "active", "removed", "dormant_moved", "secret_deleted", "dormant_expired", "merged",
    "semantic_created", "replayed", "traces_promoted", "extracted", "extraction_sent", "extraction_note",
    "deduped", "junk_removed", "junk_warnings", "conflicts", "shared", "shared_team", "learned",
    "agent_notes", "rejected", "details", "merges", "went_dormant", "open_conflicts", "shared_memories",
}  # fmt: skip
FAR = "2040-01-01T00:00:00Z"


FLAG_ON = "The feature flag is enabled for production users"
FLAG_OFF = "The feature flag is disabled for production users"
DEPLOY = "Deploy to staging failed because the migration step was skipped"
STORED = (
    DEPLOY,
    f"{DEPLOY} again",
    f"{DEPLOY} again today",
    FLAG_ON,
    FLAG_OFF,
    "Bump version to 2.3.4",
    "Use ruff format before committing Python changes",
)


def test_the_default_report_is_a_short_summary_without_ids_or_phases(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    for text in STORED:
        hippo.ok("remember", text, cwd=folder)
    done = hippo.ok("sleep", "--no-share", cwd=folder)
    assert done.stderr == ""  # phase progress only with --verbose
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "Merged 5 related memories into 2:",
        f'  - "{DEPLOY}" (3 memories)',
        f'  - "{FLAG_ON}" (2 memories)',
    ]
    assert lines[3] == "1 open conflict (`hippoctl conflicts` lists it, `hippoctl resolve <n>` settles it):"
    assert lines[4] in (f'  - "{FLAG_ON}" vs "{FLAG_OFF}" (new)', f'  - "{FLAG_OFF}" vs "{FLAG_ON}" (new)')
    assert lines[5:] == ["Also removed 2 duplicates and 1 junk memory."]
    for internal in ("mem_", "sem_", "phase", "replayed", "built"):
        assert internal not in done.stdout
    again = hippo.ok("sleep", "--no-share", cwd=folder).stdout.splitlines()
    assert again[0] == "1 open conflict (`hippoctl conflicts` lists it, `hippoctl resolve <n>` settles it):"
    assert again[1].endswith('" (open)') and len(again) == 2


def test_verbose_report_and_json(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    for text in STORED:
        hippo.ok("remember", text, cwd=folder)
    done = hippo.ok("sleep", "--no-share", "--verbose", cwd=folder)
    lines = done.stdout.splitlines()
    assert lines[:3] == ["Running consolidation...", "", "Results:"]
    # 7 stored; merge adds 2 semantic (the deploy trio, the flag pair); dedupe drops two of the
    # near-identical deploy lines (not their semantic memory, which lists them as parents, nor the
    # contradicting flag pair); junk drops the version bump.
    assert lines[3] == "  Active memories:      6"
    assert lines[4] == "  Removed (decayed):    0"
    assert lines[5] == "  Merged episodic:      5"
    assert lines[6] == "  New semantic:         2"
    assert lines[7] == "  Dormant expired:      0"
    assert lines[8] == "Learned 0 lessons from git; imported 0 agent notes"
    assert lines[9] == "Deduped 2 duplicates (episodic 2, semantic 0, cross-layer 0)"
    assert lines[10] == "Removed 1 junk memory (0 warnings)"
    assert lines[11] == "Open conflicts: 1 (1 new, 0 auto-resolved)"
    assert lines[12] == "Auto-shared 0 memories to the global store"
    assert lines[13] == "Details:"
    assert not any("built" in line for line in lines)
    assert f'  merged 3 episodic entries into semantic: "{DEPLOY[:60]}..."' in lines
    assert "sleep: writing phase 3 (decay)" in done.stderr  # progress goes to stderr
    data = hippo.json("sleep", "--dry-run", "--no-share", cwd=folder)
    assert set(data) == JSON_KEYS
    assert data["dry_run"] is True and data["conflicts"] == {"open": 1, "new": 0, "auto_resolved": 0}
    assert set(data["deduped"]) == {"episodic", "semantic", "cross_layer"}
    [conflict] = data["open_conflicts"]
    assert {conflict["a_text"], conflict["b_text"]} == {FLAG_ON, FLAG_OFF}
    assert (conflict["new"], conflict["tenant"]) == (False, "default")
    assert conflict["reason"] == "enabled/disabled mismatch on overlapping statement"
    assert data["merges"] == [] and data["went_dormant"] == []
    assert hippo.json("status", cwd=folder)["stores"][0]["sleep_count"] == 1
    hippo.stop()
    (run,) = query(db, "SELECT results_json FROM consolidation_runs")
    assert json.loads(run[0])["semantic_created"] == 2
    ops = [r[0] for r in query(db, "SELECT op FROM audit_log WHERE actor = 'daemon' ORDER BY id")]
    assert ops.count("junk_delete") == 1 and ops.count("dedupe_delete") == 2 and ops[-1] == "consolidate"
    stats = json.loads(Path(folder, ".hippo", "stats.json").read_text(encoding="utf-8"))
    assert len(stats["consolidation_runs"]) == 1 and stats["consolidation_runs"][0]["merged"] == 5


def test_json_names_the_merges(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    for text in STORED[:3]:
        hippo.ok("remember", text, cwd=folder)
    data = hippo.json("sleep", "--no-share", cwd=folder)
    [merge] = data["merges"]
    assert merge["text"] == DEPLOY and len(merge["members"]) == 3
    assert re.fullmatch(r"sem_[0-9a-f]{12}", merge["semantic_id"])


def _global_store_files(hippo: Hippo) -> dict[str, bytes]:
    """The global store's files, without the daemon's own log and start/stop state."""
    return {
        k: v for k, v in files(hippo.home).items() if not k.startswith("logs/") and k != "daemon-state.json"
    }


def test_dry_run_changes_nothing(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    for text in (
        "The cache layer is enabled in staging",
        "The cache layer is disabled in staging",
        "Old fact that fades over the years: the build uses make",
        "Old fact that fades over the years: the build uses make twice",
        "wip",
    ):
        hippo.ok("remember", text, "--tag", "python", "--tag", "gotcha", cwd=folder)
    hippo.stop()
    store_dir = os.path.dirname(db)
    before = files(store_dir)
    global_before = _global_store_files(hippo)
    hippo.start(fake_now=FAR)
    data = hippo.json("sleep", "--dry-run", cwd=folder)
    # Everything would change: decay, junk, conflicts, sharing; nothing may be written.
    assert data["dry_run"] and data["removed"] == 5 and data["dormant_moved"] == 5
    text = hippo.ok("sleep", "--dry-run", "--verbose", cwd=folder).stdout
    assert text.startswith("Dry run: nothing was changed.\nRunning consolidation...\n")
    summary = hippo.ok("sleep", "--dry-run", cwd=folder).stdout.splitlines()
    assert summary[0] == "Dry run: nothing was changed."
    assert any(line.startswith("5 memories went dormant after fading from disuse") for line in summary)
    hippo.stop()
    assert files(store_dir) == before
    assert _global_store_files(hippo) == global_before


def test_sleep_never_removes_protected_rows(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    protected = [
        make("Pinned: the release checklist lives in docs/release.md", pinned=True),
        make("Raw receipt: slack message from the on-call channel", kind="raw"),
        make(
            "Decision: we use Postgres for the event store\n\nContext: ops",
            source="decision",
            layer="semantic",
            tags=["decision"],
        ),
        make("Saved by a compaction: migrations run before deploys", compaction_id="cmp_1"),
        make("Superseded: the API lives on port 8080", superseded_by="mem_000000000001"),
        make("Active task: finish the importer", layer="buffer"),
        make("wip"),  # junk, but buffer/pinned rules do not apply: it goes
    ]
    protected[-1].pinned = True  # a pinned junk-looking row stays too
    plain = make("Plain fact that fades: the office wifi is slow")
    plant(db, [*protected, plain])
    hippo.start(fake_now="2200-01-01T00:00:00Z")
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert data["dormant_moved"] == 1 and data["junk_removed"] == 0 and data["removed"] == 1
    hippo.stop()
    left = {r[0] for r in query(db, "SELECT id FROM memories")}
    assert left == {m.id for m in protected}
    assert query(db, "SELECT id, dormant_reason FROM dormant_memories") == [(plain.id, "faded")]
    assert query(db, "SELECT op, target_id FROM audit_log WHERE op = 'dormant_move'") == [
        ("dormant_move", plain.id)
    ]
    assert os.path.isfile(os.path.join(folder, ".hippo", "dormant", f"{plain.id}.md"))


def test_secret_deleted_and_dormant_retention(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    secret = make("Staging password=Tr0ub4dor&3xyz for the admin user")
    plain = make("Plain fact that fades: the office wifi is slow")
    plant(db, [secret, plain])
    hippo.start(fake_now="2100-01-01T00:00:00Z")
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert (data["removed"], data["dormant_moved"], data["secret_deleted"]) == (2, 1, 1)
    assert [(d["id"], d["text"]) for d in data["went_dormant"]] == [(plain.id, plain.content)]
    status = hippo.json("status", cwd=folder)["stores"][0]
    assert status["dormant"] == 1
    hippo.stop()
    hippo.start(fake_now="2100-06-29T00:00:00Z")  # 179 days later: kept
    assert hippo.json("sleep", "--no-share", cwd=folder)["dormant_expired"] == 0
    hippo.stop()
    hippo.start(fake_now="2100-07-01T00:00:00Z")  # 181 days later: expired
    assert hippo.json("sleep", "--no-share", cwd=folder)["dormant_expired"] == 1
    hippo.stop()
    assert query(db, "SELECT count(*) FROM dormant_memories") == [(0,)]
    wanted = "('decay_delete_secret', 'dormant_move', 'dormant_expire')"
    ops = query(db, f"SELECT op, target_id FROM audit_log WHERE op IN {wanted} ORDER BY id")
    assert ops == [
        ("dormant_move", plain.id),
        ("decay_delete_secret", secret.id),
        ("dormant_expire", plain.id),
    ]
    assert not os.path.exists(os.path.join(folder, ".hippo", "dormant", f"{plain.id}.md"))


def test_merge_sources_are_demoted_not_remerged(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo, config={"replay": {"count": 0}})  # no replay: exact half-lives
    first = hippo.json("remember", "Flaky test in the payments suite: retry the fixture setup", cwd=folder)[
        "id"
    ]
    second = hippo.json(
        "remember",
        "Payments suite flaky again; the fixture setup needs a retry with a longer timeout",
        "--error",
        cwd=folder,
    )["id"]
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert data["merged"] == 2 and data["semantic_created"] == 1
    again = hippo.json("sleep", "--no-share", cwd=folder)
    assert again["merged"] == 0 and again["semantic_created"] == 0
    hippo.stop()
    rows = dict(
        (r[0], r[1:])
        for r in query(db, "SELECT id, half_life_days, merged_into, parents, source FROM memories")
    )
    sem = next(i for i, r in rows.items() if r[3] == "consolidation")
    assert re.fullmatch(r"sem_[0-9a-f]{12}", sem)
    # max(1, floor(hl x 0.3)): 365 -> 109, 730 -> 219; the semantic memory has an error source: 730.
    assert rows[first][1] == sem and rows[first][0] == 109.0
    assert rows[second][1] == sem and rows[second][0] == 219.0
    assert json.loads(rows[sem][2]) == [first, second] and rows[sem][0] == 730.0


def test_sources_of_a_merge_dedupe_deleted_stay_merged(hippo: Hippo) -> None:
    # An older merged memory that the new merge duplicates (overlap 0.86 > 0.7) and that dedupe
    # keeps (recalled before, so it comes first): the new semantic memory is deleted by the sleep
    # that made it. Its sources must not be merged again by every later sleep, each time losing
    # 70 % of their half-life until they fade.
    hippo.start(fake_now="2026-01-02T00:00:00Z")
    folder, db = project(hippo, config={"replay": {"count": 0}})  # no replay: exact half-lives
    hippo.stop()
    older = make(
        "[Consolidated from 2 related memories]\n\nThe basalt ledger service request timeout is 2363 seconds",
        layer="semantic",
        source="consolidation",
        confidence="inferred",
        retrieval_count=5,
    )
    plant(db, [older])
    hippo.start(fake_now="2026-01-02T00:00:00Z")
    new = [
        hippo.json("remember", text, cwd=folder)["id"]
        for text in (
            "The basalt ledger service request timeout is 5615 seconds",
            "The nectar signal service request timeout is 4128 seconds",
        )
    ]
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert (data["merged"], data["semantic_created"], data["deduped"]["semantic"]) == (2, 1, 1)
    for _ in range(2):
        again = hippo.json("sleep", "--no-share", cwd=folder)
        assert (again["merged"], again["semantic_created"]) == (0, 0)
    hippo.stop()
    rows = query(db, "SELECT id, half_life_days, merged_into FROM memories WHERE layer = 'episodic'")
    assert sorted(rows) == sorted((i, 109.0, older.id) for i in new)
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'dedupe_delete'") == [(1,)]


def test_a_sleep_keeps_the_traits_of_its_texts_and_leaves_no_spill_behind(hippo: Hippo) -> None:
    # The planner hands the traits it worked out (model/sleep_traits.py) over in a file of the
    # daemon's home; the daemon copies them into the store after the commit and removes it.
    spill_dir = os.path.join(hippo.home, "sleep-spill")
    hippo.start()
    folder, db = project(hippo)
    texts = (FLAG_ON, "Use ruff format before committing Python changes", DEPLOY)
    for text in texts:
        hippo.ok("remember", text, cwd=folder)
    hippo.ok("sleep", "--dry-run", cwd=folder)
    assert query(db, "SELECT count(*) FROM sleep_traits") == [(0,)]
    hippo.ok("sleep", cwd=folder)
    kept = query(db, "SELECT count(*) FROM sleep_traits JOIN memories ON memories.rowid = sleep_traits.row")
    assert kept == [(len(texts),)]
    assert os.listdir(spill_dir) == []
