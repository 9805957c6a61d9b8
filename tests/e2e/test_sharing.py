"""promote, share, peers, sync and sleep's auto-share against a real global store (sleep.md §8)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from e2e.sleep_support import make, plant, project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

GOTCHA = "PowerShell reads scripts as UTF-16 unless they carry a BOM; save with utf-8-sig"


def _global(hippo: Hippo) -> list[tuple[str, ...]]:
    return query(
        os.path.join(hippo.home, "hippo.db"), "SELECT id, source, origin_project, content FROM memories"
    )


def test_share_promote_and_peers(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo, "webapp")
    good = hippo.json("remember", GOTCHA, "--tag", "powershell", "--tag", "gotcha", cwd=folder)["id"]
    tags = ("--tag", "deploy", "--tag", "config", "--tag", "file-path")
    local = hippo.json("remember", "Deploy config lives in infra/deploy.yaml", *tags, cwd=folder)["id"]
    done = hippo.ok("share", good, cwd=folder)
    assert (
        done.stdout.startswith(f"Shared {good} to the global store as g_")
        and "(transfer score 0.70)" in done.stdout
    )
    again = hippo.json("share", good, cwd=folder)["items"][0]
    assert again["already"] is True
    low = hippo.ctl("share", local, cwd=folder)
    assert low.returncode == 1 and "transfer score 0.05, below 0.3" in low.stderr and "--force" in low.stderr
    assert hippo.json("share", local, "--force", cwd=folder)["items"][0]["score"] == 0.05
    note = hippo.json("remember", "The staging box runs Ubuntu 24.04", cwd=folder)["id"]
    done = hippo.ok("promote", note, cwd=folder)
    assert done.stdout.startswith(f"Promoted {note} to the global store as g_")
    sources = sorted(s for _, s, _, _ in _global(hippo))
    assert sources[0] == "promoted:webapp" and all(s.startswith("shared:webapp:20") for s in sources[1:])
    assert all(origin == "webapp" for _, _, origin, _ in _global(hippo))
    peers = hippo.json("peers", cwd=folder)["peers"]
    assert [(p["project"], p["memories"]) for p in peers] == [("webapp", 3)]
    assert hippo.ok("peers").stdout.startswith("Projects contributing to the global store:\n  webapp")
    missing = hippo.ctl("share", "mem_000000000000", cwd=folder)
    assert missing.returncode == 1


def test_share_auto_and_sleep_phase(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.ok("remember", GOTCHA, "--tag", "powershell", "--tag", "gotcha", cwd=folder)
    python = ("--tag", "python", "--tag", "windows")
    hippo.ok("remember", "Python subprocess on windows needs shell=True for builtins", *python, cwd=folder)
    hippo.ok("remember", "The office coffee machine is on floor 3", cwd=folder)
    secret = "Secret token: ghp_" + "x" * 36 + " python gotcha"
    hippo.ok("remember", secret, "--tag", "python", "--tag", "gotcha", cwd=folder)
    preview = hippo.json("share", "--auto", "--dry-run", cwd=folder)
    assert preview["dry_run"] and len(preview["items"]) == 2
    assert not os.path.exists(os.path.join(hippo.home, "hippo.db")) or _global(hippo) == []
    data = hippo.json("sleep", cwd=folder)
    assert data["shared"] == 2
    assert sorted(c for *_, c in _global(hippo))[0] == GOTCHA
    assert hippo.json("sleep", cwd=folder)["shared"] == 0  # already there (first 200 chars)
    assert hippo.json("share", "--auto", "--min-score", "0.5", cwd=folder)["items"] != []
    hippo.stop()
    # The run record carries phase 12's count, though the share committed after it.
    runs = query(db, "SELECT json_extract(results_json, '$.shared') FROM consolidation_runs ORDER BY id")
    assert runs == [(2,), (0,)]


def test_sync_into_a_project(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "--global", "Prefer rg over grep for searching code")
    hippo.stop()
    plant(
        os.path.join(hippo.home, "hippo.db"), [make("Webapp uses port 8443 for TLS", origin_project="webapp")]
    )
    hippo.start()
    folder, db = project(hippo, "api")
    hippo.ok("remember", "prefer RG over grep for searching code", cwd=folder)  # same first 200 chars
    hippo.ok("remember", "Use Black for formatting Python", "--global")
    done = hippo.ok("sync", cwd=folder)
    assert done.stdout.strip() == (
        "Synced 1 memory from the global store (1 already present, 0 rejected, "
        "1 from other projects skipped: add --cross-project)"
    )
    crossed = hippo.json("sync", "--cross-project", cwd=folder)
    assert len(crossed["copied"]) == 1 and crossed["present"] == 2
    hippo.stop()
    rows = query(db, "SELECT content, source FROM memories WHERE source = 'sync:global' ORDER BY content")
    assert rows == [
        ("Use Black for formatting Python", "sync:global"),
        ("Webapp uses port 8443 for TLS", "sync:global"),
    ]
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'sync'") == [(2,)]


def test_a_rejected_value_comes_back_through_neither_sync_nor_merge(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "--global", "Prefer rg over grep for searching code")
    folder, _ = project(hippo, "api")
    hippo.ok(
        "reject", "--value", "Prefer rg over grep for searching code", "--reason", "we use ag", cwd=folder
    )
    synced = hippo.json("sync", cwd=folder)
    assert (synced["copied"], synced["rejected"]) == ([], 1)

    # The text a merge of these two would make is rejected beforehand: no semantic memory appears.
    first = "Flaky test in the payments suite: retry the fixture setup"
    second = "Payments suite flaky again; the fixture setup needs a retry with a longer timeout"
    merged = f"[Consolidated from 2 related memories]\n\n{second}"
    hippo.ok("reject", "--value", merged, "--reason", "not a pattern", cwd=folder)
    for text in (first, second):
        hippo.ok("remember", text, cwd=folder)
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert (data["semantic_created"], data["merged"], data["rejected"]) == (0, 0, 1)
    assert hippo.json("recall", "payments fixture", cwd=folder)["results"][0]["layer"] == "episodic"
