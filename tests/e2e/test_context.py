"""`context` (recall.md §9) against a real daemon: modes, formats, framings, budget, --auto from a
real git repo, project isolation, the continuity preamble and its token-ledger rows."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.gitrepo import commit, make_repo
from e2e.sleep_support import STAMP, make, plant, project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = STAMP
EXPORT = "Nightly export job times out when the S3 bucket lifecycle rule archives yesterday's files"
LINT = "Run ruff format before committing the formatter changes"


def padded_tokens(text: str) -> int:
    """The heading's figure: the block's tokens with the heading's numbers padded to 6 digits."""
    heading = next(line for line in text.splitlines() if line.startswith("## Project Memory ("))
    return math.ceil(
        (len(text) - len(heading) + len("## Project Memory (000000 entries, 000000 tokens)")) / 4
    )


def ledger(hippo: Hippo) -> list[tuple[Any, ...]]:
    return query(
        hippo.db, "SELECT surface, kind, session_id, project, store, tokens, items, skipped FROM token_ledger"
    )


def wait_ledger(hippo: Hippo, count: int) -> list[tuple[Any, ...]]:
    assert hippo.wait_for(lambda: len(ledger(hippo)) >= count, 10), ledger(hippo)
    return ledger(hippo)


def started(
    hippo: Hippo, rows: list[Any] | None = None, global_rows: list[Any] | None = None
) -> tuple[str, str]:
    """A daemon with a project store `proj` holding `rows` and a global store holding `global_rows`."""
    hippo.start(fake_now=NOW)
    folder, db = project(hippo)
    hippo.ok("status", "--global")
    hippo.stop()
    if rows:
        plant(db, rows)
    if global_rows:
        plant(hippo.db, global_rows)
    hippo.start(fake_now=NOW)
    return folder, db


def test_budget_zero_prints_nothing_and_touches_nothing(hippo: Hippo) -> None:
    folder, db = started(hippo, [make(EXPORT, id="mem_a")])
    done = hippo.ok("context", "nightly export", "--budget", "0", cwd=folder)
    assert (done.stdout, done.stderr) == ("", "")
    # A negative budget is refused as recall refuses it, and touches nothing either.
    done = hippo.ctl("context", "nightly export", "--budget", "-5", cwd=folder)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "hippoctl: error: --budget must be 0 or more\n",
    )
    hippo.stop()
    assert query(db, "SELECT retrieval_count FROM memories") == [(0,)]
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'recall'") == [(0,)]
    assert ledger(hippo) == []


def test_query_mode_strengthens_audits_and_counts_tokens(hippo: Hippo) -> None:
    folder, db = started(hippo, [make(EXPORT, id="mem_a", tags=["error"]), make(LINT, id="mem_b")])
    env = dict(hippo.env, HIPPO_SESSION_ID="sess-ctx-1")
    done = hippo.ctl("context", "nightly export", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    text = done.stdout.rstrip("\n")
    lines = text.split("\n")
    assert lines[1:] == [f"- [verified] {EXPORT} [error] (100%)"]
    assert lines[0] == f"## Project Memory (1 entry, {padded_tokens(text)} tokens)"
    rows = wait_ledger(hippo, 1)
    store = str(Path(db).parent)
    assert rows == [("context", "sent", "sess-ctx-1", "proj", store, math.ceil(len(text) / 4), 1, 0)]
    hippo.stop()
    assert query(db, "SELECT id, retrieval_count FROM memories ORDER BY id") == [("mem_a", 1), ("mem_b", 0)]
    audits = query(db, "SELECT metadata_json FROM audit_log WHERE op = 'recall'")
    assert [json.loads(a[0]) for a in audits] == [
        {"query": "nightly export", "results": 1, "mode": "context"}
    ]


def test_star_mode_orders_by_strength_with_global_rows_and_strengthens_nothing(hippo: Hippo) -> None:
    weak = make(
        "Weak project note about caching layers", id="mem_w", half_life_days=30.0,
        last_retrieved="2025-12-01T00:00:00.000Z",
    )  # fmt: skip
    strong = make(LINT, id="mem_s")
    shared = make("Global: prefer uv over pip for new projects", id="g_1", origin_project="")
    folder, db = started(hippo, [weak, strong], [shared])
    data = json.loads(hippo.ok("context", "--format", "json", cwd=folder).stdout)
    assert data["mode"] == "all" and data["query"] is None
    ids = [m["id"] for m in data["memories"]]
    # Equal live strength: the project row (x1.2) ranks above the global one; the faded row last.
    assert ids == ["mem_s", "g_1", "mem_w"]
    assert [m["source"] for m in data["memories"]] == ["local", "global", "local"]
    text = hippo.ok("context", cwd=folder).stdout
    assert f"- [global] [verified] {shared.content} (100%)" in text
    hippo.stop()
    assert query(db, "SELECT sum(retrieval_count) FROM memories") == [(0,)]
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'recall'") == [(0,)]


def test_framings(hippo: Hippo) -> None:
    seen = make("Observed: the cache warms in 40 seconds", id="mem_o", confidence="observed", tags=["cache"])
    known = make("Verified: the cache key includes the tenant", id="mem_v")
    folder, _ = started(hippo, [seen, known])

    def bullets(framing: str) -> list[str]:
        out = hippo.ok("context", "cache", "--framing", framing, cwd=folder).stdout
        return sorted(line for line in out.splitlines() if line.startswith("- "))

    assert bullets("observe") == [
        "- [observed] Previously observed (2026-01-01): Observed: the cache warms in 40 seconds "
        "[cache] (100%)",
        "- [verified] Verified: the cache key includes the tenant (100%)",
    ]
    assert bullets("suggest") == [
        "- [observed] Consider: Observed: the cache warms in 40 seconds [cache] (100%)",
        "- [verified] Consider: Verified: the cache key includes the tenant (100%)",
    ]
    assert bullets("assert") == [
        "- Observed: the cache warms in 40 seconds [cache] (100%)",
        "- Verified: the cache key includes the tenant (100%)",
    ]


def test_json_shape_and_limit(hippo: Hippo) -> None:
    folder, _ = started(
        hippo, [make(EXPORT, id="mem_a"), make("Nightly backup export rotates keys", id="mem_b")]
    )
    data = json.loads(
        hippo.ok("context", "nightly export", "--format", "json", "--limit", "1", cwd=folder).stdout
    )
    assert set(data) == {"mode", "query", "budget", "tokens", "snapshot", "handoff", "events", "memories"}
    assert (data["mode"], data["query"], data["budget"]) == ("query", "nightly export", 1500)
    assert (data["snapshot"], data["handoff"], data["events"]) == (None, None, [])
    assert len(data["memories"]) == 1
    memory = data["memories"][0]
    assert set(memory) == {
        "id", "source", "confidence", "aged", "tags", "created", "strength", "content", "framed",
        "other_project", "score", "truncated", "full_chars",
    }  # fmt: skip
    assert memory["framed"] == memory["content"]
    assert (memory["truncated"], memory["full_chars"]) == (False, None)
    # --json prints the same reply data.
    assert hippo.json("context", "nightly export", "--format", "json", "--limit", "1", cwd=folder) == data


def test_budget_counts_the_whole_block(hippo: Hippo) -> None:
    rows = [make(f"Exporter note {i}: " + "detail " * 30, id=f"mem_{i:02d}") for i in range(12)]
    folder, _ = started(hippo, rows)
    for budget in (120, 400):
        text = hippo.ok("context", "exporter", "--budget", str(budget), cwd=folder).stdout.rstrip("\n")
        count = sum(1 for line in text.splitlines() if line.startswith("- "))
        assert 0 < count < 12
        assert math.ceil(len(text) / 4) <= padded_tokens(text) <= budget
        noun = "entry" if count == 1 else "entries"
        assert text.splitlines()[0] == f"## Project Memory ({count} {noun}, {padded_tokens(text)} tokens)"


def test_additional_context_is_one_line_capped_and_empty_when_nothing(hippo: Hippo) -> None:
    rows = [make(f"Exporter note {i}: " + "detail " * 200, id=f"mem_{i:02d}") for i in range(20)]
    folder, _ = started(hippo, rows)
    out = hippo.ok(
        "context", "exporter", "--budget", "100000", "--format", "additional-context", cwd=folder
    ).stdout
    assert out.count("\n") == 1
    block = json.loads(out)["hookSpecificOutput"]
    assert block["hookEventName"] == "UserPromptSubmit"
    assert block["additionalContext"].startswith("## Project Memory (")
    assert 5000 < len(block["additionalContext"]) <= 10_000
    empty = hippo.ok("context", "zebra quartz", "--format", "additional-context", cwd=folder)
    assert (empty.stdout, empty.stderr) == ("", "")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_auto_query_from_changed_paths_then_branch_then_star(hippo: Hippo) -> None:
    folder, _ = started(hippo, [make(EXPORT, id="mem_a"), make(LINT, id="mem_b")])
    repo = make_repo(Path(folder))
    _git(repo, "checkout", "-q", "-b", "main")
    commit(repo, "start")

    def auto() -> dict[str, Any]:
        return dict(json.loads(hippo.ok("context", "--auto", "--format", "json", cwd=folder).stdout))

    assert (auto()["mode"], auto()["query"]) == ("all", None)
    _git(repo, "checkout", "-q", "-b", "fix/ruff_format-cache")
    assert auto()["query"] == "fix ruff format cache"
    assert [m["id"] for m in auto()["memories"]] == ["mem_b"]
    exporter = repo / "src" / "nightly" / "exporter.index.py"
    exporter.parent.mkdir(parents=True)
    exporter.write_text("x = 1\n")
    _git(repo, "add", "src")
    data = auto()
    assert data["query"] == "nightly exporter"
    assert [m["id"] for m in data["memories"]] == ["mem_a"]


def test_project_isolation_secrets_and_cross_project(hippo: Hippo) -> None:
    key = "api_key = sk9f8e7d6c5b4a3f2e1d"
    own_secret = make(f"Exporter staging {key}", id="mem_sec")
    mine = make("Exporter retries three times", id="mem_own")
    shared = make("Exporter logs go to stderr", id="g_shared", origin_project="")
    theirs = make("Exporter in billing uses cron", id="g_other", origin_project="billing")
    their_secret = make(f"Exporter billing {key}", id="g_osec", origin_project="billing")
    folder, _ = started(hippo, [own_secret, mine], [shared, theirs, their_secret])

    def shown(*args: str) -> tuple[list[str], list[str]]:
        data = json.loads(hippo.ok("context", "exporter", "--format", "json", *args, cwd=folder).stdout)
        main = sorted(m["id"] for m in data["memories"] if not m["other_project"])
        other = sorted(m["id"] for m in data["memories"] if m["other_project"])
        return main, other

    assert shown() == (["g_shared", "mem_own", "mem_sec"], [])
    assert shown("--cross-project") == (["g_shared", "mem_own", "mem_sec"], ["g_other"])
    text = hippo.ok("context", "exporter", "--cross-project", cwd=folder).stdout
    assert (
        "\n\n## Other-project memory (explicitly requested, 1 entry)\n"
        "- [global] [verified] Exporter in billing" in text
    )
    # Outside the project, its secret stays hidden; the global store's own rows are shown.
    elsewhere = hippo.root + "/elsewhere"
    Path(elsewhere).mkdir()
    data = json.loads(hippo.ok("context", "exporter", "--format", "json", cwd=elsewhere).stdout)
    assert sorted(m["id"] for m in data["memories"]) == ["g_shared"]


def test_isolation_can_be_turned_off(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    folder, _ = project(hippo, config={"contextProjectIsolation": False})
    hippo.ok("status", "--global")
    hippo.stop()
    plant(hippo.db, [make("Exporter in billing uses cron", id="g_other", origin_project="billing")])
    hippo.start(fake_now=NOW)
    data = json.loads(hippo.ok("context", "exporter", "--format", "json", cwd=folder).stdout)
    assert [(m["id"], m["other_project"]) for m in data["memories"]] == [("g_other", False)]


def _continuity(db: str) -> None:
    conn = __import__("sqlite3").connect(db)
    with conn:
        conn.execute(
            "INSERT INTO task_snapshots (task, summary, next_step, status, source, session_id, tenant_id, "
            "created_at, updated_at) VALUES ('Port ranking', 'BM25 passes', 'Count labels', 'active', 'cli', "
            "'s1', 'default', ?, ?)",
            (STAMP, STAMP),
        )
        conn.execute(
            "INSERT INTO session_handoffs (session_id, summary, next_action, artifacts_json, tenant_id, "
            "created_at) "
            "VALUES ('s1', 'Dormant done', 'Retention sweep', '[\"hippod/sleep.py\"]', 'default', "
            "'2025-12-30T18:22:05.000Z')"
        )
        conn.execute(
            "INSERT INTO session_handoffs (session_id, summary, tenant_id, created_at) "
            "VALUES ('s2', 'Other session', 'default', ?)",
            (STAMP,),
        )
        for i in range(7):
            conn.execute(
                "INSERT INTO session_events (session_id, event_type, content, source, tenant_id, created_at) "
                "VALUES ('s1', 'progress', ?, 'cli', 'default', ?)",
                (f"step {i}", STAMP),
            )
    conn.close()


def test_continuity_preamble_leads_and_counts_in_the_budget(hippo: Hippo) -> None:
    folder, db = started(hippo, [make(EXPORT, id="mem_a")])
    _continuity(db)
    text = hippo.ok("context", "nightly export", cwd=folder).stdout.rstrip("\n")
    preamble, memories = text.split("\n\n## Project Memory")
    assert preamble == (
        "## Active task\nTask: Port ranking\nSummary: BM25 passes\nNext step: Count labels\n\n"
        "## Handoff #1 (session s1, 2025-12-30 18:22 UTC)\nSummary: Dormant done\nNext: Retention sweep\n"
        "Artifacts: hippod/sleep.py\n\n"
        "## Recent session events\n" + "\n".join(f"- [progress] step {i}" for i in range(2, 7))
    )
    assert memories.startswith(f" (1 entry, {padded_tokens(text)} tokens)\n- [verified] {EXPORT}")
    data = json.loads(hippo.ok("context", "--format", "json", cwd=folder).stdout)
    assert data["snapshot"]["task"] == "Port ranking" and data["handoff"]["id"] == 1
    assert [e["content"] for e in data["events"]] == [f"step {i}" for i in range(2, 7)]
    # A budget too small for the memory still carries the task, and stays within itself.
    small = hippo.ok("context", "nightly export", "--budget", "60", cwd=folder).stdout.rstrip("\n")
    assert small.startswith("## Active task") and "## Project Memory" not in small
    assert math.ceil(len(small) / 4) <= 60


def test_recall_writes_a_ledger_row_and_no_text(hippo: Hippo) -> None:
    folder, db = started(hippo, [make(EXPORT, id="mem_a")])
    env = dict(hippo.env, HIPPO_SESSION_ID="sess-r")
    done = hippo.ctl("recall", "nightly export", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.rstrip("\n")
    rows = wait_ledger(hippo, 1)
    assert rows == [
        ("recall", "sent", "sess-r", "proj", str(Path(db).parent), math.ceil(len(printed) / 4), 1, 0)
    ]
    hippo.ok("recall", "zebra quartz", cwd=folder)
    hippo.stop()
    # No row for a recall that found nothing; the ledger never holds the query.
    assert len(ledger(hippo)) == 1
    assert not query(hippo.db, "SELECT * FROM token_ledger WHERE ts LIKE '%nightly%'")


def test_bad_input(hippo: Hippo) -> None:
    folder, _ = started(hippo, [make(EXPORT, id="mem_a")])
    for args, message in (
        (("--limit", "-1"), "--limit must be 0 or more"),
        (("--budget", "-1"), "--budget must be 0 or more"),
        (("--framing", "shout"), "--framing"),
        (("--include-recent", "3"), "--include-recent goes with --pinned-only"),
        (("   ",), ""),
        (("--budget", str(2**70)), "--budget is out of range"),
        (("--limit", str(2**70)), "--limit is out of range"),
    ):
        done = hippo.ctl("context", *args, cwd=folder)
        assert done.returncode == 2, (args, done)
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
    assert ledger(hippo) == []
