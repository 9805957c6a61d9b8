"""End-to-end: supersede, reject, unreject, invalidate, decide and audit (memory-model.md §12, §15)."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _remember(hippo: Hippo, text: str, *args: str) -> str:
    return str(hippo.json("remember", text, *args)["id"])


def _memory(hippo: Hippo, memory_id: str) -> dict[str, Any]:
    memory: dict[str, Any] = hippo.json("inspect", memory_id)["memory"]
    return memory


def _recalled(hippo: Hippo, query: str, *args: str) -> list[str]:
    return [r["id"] for r in hippo.json("recall", query, *args)["results"]]


def test_supersede_keeps_the_old_version_on_record(hippo: Hippo) -> None:
    hippo.start()
    old = _remember(hippo, "The staging database runs Postgres 13", "--tag", "db")
    done = hippo.ok("supersede", old, "The staging database runs Postgres 16")
    new = done.stdout.split("with [")[1].split("]")[0]
    assert done.stdout.startswith(f"Superseded [{old}] with [{new}]\n")
    assert "Layer: episodic | Strength: 1.00 | Half-life: 365d | Confidence: verified" in done.stdout

    assert _recalled(hippo, "staging database postgres") == [new]
    assert set(_recalled(hippo, "staging database postgres", "--include-superseded")) == {old, new}
    assert _memory(hippo, old)["superseded_by"] == new
    assert _memory(hippo, new)["tags"] == _memory(hippo, old)["tags"]  # copied from the old version
    assert "db" in _memory(hippo, new)["tags"]
    assert hippo.json("inspect", new)["supersedes"] == [old]

    again = hippo.ctl("supersede", old, "The staging database runs Postgres 17")
    assert again.returncode == 1
    assert again.stderr.strip() == f"hippoctl: {old} was already superseded by {new}"
    missing = hippo.ctl("supersede", "mem_000000000000", "anything at all")
    assert missing.returncode == 1 and "no memory with id mem_000000000000" in missing.stderr
    entries = hippo.json("audit", "list", "--op", "supersede")["entries"]
    assert [(e["target"], e["metadata"]) for e in entries] == [(old, {"new": new})]


def test_reject_removes_every_copy_and_refuses_the_value(hippo: Hippo) -> None:
    hippo.start()
    text = "Use the legacy billing endpoint for refunds"
    first = _remember(hippo, text)
    second = _remember(hippo, "  use the LEGACY billing endpoint   for refunds ")  # same normalised value
    keep = _remember(hippo, "Refunds go through the payments service")

    done = hippo.json("reject", first, "--reason", "the legacy endpoint was removed")
    assert sorted(done["removed"]) == sorted([first, second])
    for memory_id in (first, second):
        assert hippo.ctl("inspect", memory_id).returncode == 1
    assert _recalled(hippo, "refunds") == [keep]

    refused = hippo.ctl("remember", text)
    assert refused.returncode == 1
    assert refused.stderr.startswith("hippoctl: this text was rejected earlier and cannot be stored again")
    listed = hippo.json("rejections")["rejections"]
    assert [(r["digest"], r["reason"], r["source_memory_id"]) for r in listed] == [
        (done["digest"], "the legacy endpoint was removed", first)
    ]
    assert text not in hippo.ok("rejections").stdout  # never the text

    assert hippo.ok("unreject", done["digest"][:6]).stdout.startswith(f"Unrejected {done['digest'][:12]}")
    assert hippo.ctl("remember", text).returncode == 0
    assert hippo.ctl("unreject", "abcd").returncode == 1

    value = hippo.json("reject", "--value", "Refunds go through the payments service", "--reason", "wrong")
    assert value["removed"] == [keep]
    bad = hippo.ctl("reject", first, "--value", "x y z", "--reason", "r")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def _digest(text: str) -> str:
    return hashlib.sha256(" ".join(unicodedata.normalize("NFC", text).lower().split()).encode()).hexdigest()


def test_unreject_refuses_an_ambiguous_prefix(hippo: Hippo) -> None:
    # Two values whose digests share their first 4 hex characters.
    seen: dict[str, str] = {}
    for n in itertools.count():
        value = f"rejected value number {n}"
        prefix = _digest(value)[:4]
        if prefix in seen:
            pair = (seen[prefix], value)
            break
        seen[prefix] = value
    hippo.start()
    for value in pair:
        hippo.ok("reject", "--value", value, "--reason", "test")
    done = hippo.ctl("unreject", prefix)
    assert done.returncode == 1
    assert done.stderr.strip() == f"hippoctl: {prefix} matches 2 rejected values; give more of it"
    assert len(hippo.json("rejections")["rejections"]) == 2


def test_invalidate_weakens_matches_and_skips_pinned(hippo: Hippo) -> None:
    hippo.start()
    # Tokens are matched as they are (no stemming): "session" and "cache" must appear as such.
    a = _remember(hippo, "The session cache lives in Redis on port 6379")
    b = _remember(hippo, "The Redis session cache is flushed nightly")
    pinned = _remember(hippo, "Redis session cache keys expire after 1 day", "--pin")
    other = _remember(hippo, "Logs are shipped to Loki")

    dry = hippo.json("invalidate", "redis session cache", "--dry-run")
    assert sorted(dry["invalidated"]) == sorted([a, b]) and dry["skipped_pinned"] == [pinned]
    assert _memory(hippo, a)["half_life_days"] == 365 and _memory(hippo, a)["confidence"] == "verified"

    done = hippo.ok("invalidate", "redis session cache", "--reason", "moved to memcached")
    assert done.stdout.splitlines()[0] == 'Invalidated 2 memories referencing "redis session cache".'
    assert f"  skipped (pinned): [{pinned}]" in done.stdout
    for memory_id in (a, b):
        memory = _memory(hippo, memory_id)
        assert (memory["half_life_days"], memory["confidence"]) == (182, "stale")
        assert "invalidated" in memory["tags"]
    assert _memory(hippo, pinned)["half_life_days"] == 365
    assert _memory(hippo, other)["confidence"] == "verified"

    one = hippo.json("invalidate", "--id", other)
    assert one["invalidated"] == [other] and _memory(hippo, other)["half_life_days"] == 182
    assert len(hippo.json("audit", "list", "--op", "invalidate")["entries"]) == 3


def test_decide_supersede_list_get_close(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ok("decide", "Use Postgres for the ledger", "--context", "we need ACID transactions")
    lines = done.stdout.splitlines()
    assert lines[0] == "Decision recorded: #1"
    first = lines[1].removeprefix("memory: ")
    memory = _memory(hippo, first)
    assert memory["content"] == "Use Postgres for the ledger\n\nContext: we need ACID transactions"
    assert (memory["layer"], memory["source"], memory["confidence"]) == ("semantic", "decision", "verified")
    assert memory["tags"][0] == "decision"

    done = hippo.ok("decide", "Use SQLite for the ledger", "--supersedes", first)
    assert done.stdout.splitlines()[0] == "Decision recorded: #2"
    assert done.stdout.splitlines()[2] == f"supersedes memory: {first} (decision #1 superseded)"
    old = _memory(hippo, first)
    assert old["superseded_by"] is not None and old["confidence"] == "stale"
    assert old["half_life_days"] == 182 and "superseded" in old["tags"]

    assert hippo.ok("decide", "list").stdout.splitlines() == [
        "#2 [active] Use SQLite for the ledger",
        "#1 [superseded] Use Postgres for the ledger",
    ]
    assert [d["n"] for d in hippo.json("decide", "list", "--status", "superseded")["decisions"]] == [1]
    got = hippo.ok("decide", "get", "1").stdout
    assert "superseded by decision #2" in got and "Context: we need ACID transactions" in got
    assert hippo.ok("decide", "close", "2").stdout.strip() == "Decision #2 closed (its memory stays)"
    again = hippo.ctl("decide", "close", "2")
    assert again.returncode == 1 and again.stderr.strip() == "hippoctl: decision #2 is already closed"
    assert hippo.ctl("decide", "get", "9").returncode == 1


def test_audit_list_and_prune_never_hold_memory_text(hippo: Hippo) -> None:
    hippo.start()
    secret_text = "The deploy key lives in the team vault under ops"
    memory_id = _remember(hippo, secret_text)
    hippo.ok("recall", "deploy key")
    hippo.ok("forget", memory_id)
    entries = hippo.json("audit", "list")["entries"]
    assert [e["op"] for e in entries] == ["forget", "recall", "remember"]
    assert hippo.json("audit", "list", "--op", "recall", "--limit", "1")["entries"][0]["metadata"] == {
        "query": "deploy key",
        "results": 1,
        "mode": "recall",
    }
    hippo.stop()
    with sqlite3.connect(hippo.db) as conn:
        rows = conn.execute("SELECT metadata_json, target_id FROM audit_log").fetchall()
    assert rows and not any("vault" in str(r) for r in rows)

    hippo.start()
    pruned = hippo.json("audit", "prune", "--days", "0")
    assert pruned["deleted"] == 3
    assert [e["op"] for e in hippo.json("audit", "list")["entries"]] == ["audit_prune"]
    assert hippo.ctl("audit", "prune").returncode == 2
    assert hippo.ctl("audit", "list", "--since", "yesterday").returncode == 2


def test_dormant_find_restore_and_forget(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-01-01T00:00:00Z")
    kept = _remember(hippo, "The office printer queue jams on duplex jobs")
    gone = _remember(hippo, "The old fax line forwards to reception")
    hippo.stop()
    # Five years later, unused: strength 0.5^5 < 0.05, so sleep moves both to the dormant store.
    hippo.start(fake_now="2031-01-02T00:00:00Z")
    assert hippo.json("sleep")["dormant_moved"] == 2
    assert _recalled(hippo, "printer queue") == []
    assert {r["id"] for r in hippo.json("dormant")["results"]} == {kept, gone}
    assert [r["id"] for r in hippo.json("dormant", "printer", "duplex")["results"]] == [kept]
    assert hippo.json("dormant", "printer", "fax")["results"] == []
    mirror = Path(hippo.home, "dormant", f"{kept}.md")
    assert hippo.wait_for(mirror.exists, 10)

    assert hippo.ok("dormant", "restore", kept).stdout.strip() == f"Restored [{kept}] from dormant"
    assert _recalled(hippo, "printer queue") == [kept]
    memory = _memory(hippo, kept)
    assert memory["last_retrieved"].startswith("2031-01-02")
    # Restored counts as a retrieval (+1, +2 days), and the recall above as one more.
    assert (memory["retrieval_count"], memory["half_life_days"]) == (2, 369)
    assert hippo.wait_for(lambda: not mirror.exists(), 10)
    assert hippo.json("sleep")["dormant_moved"] == 0  # a fresh recall clock

    assert hippo.ok("dormant", "forget", gone).stdout.strip() == f"Forgot dormant [{gone}] for good"
    assert hippo.json("dormant")["results"] == []
    assert hippo.ctl("dormant", "restore", gone).returncode == 1
    ops = [e["op"] for e in hippo.json("audit", "list")["entries"]]
    assert {"dormant_move", "dormant_restore", "dormant_forget"} <= set(ops)


def test_dormant_listing_and_errors(hippo: Hippo) -> None:
    hippo.start()
    assert hippo.ok("dormant").stdout.strip() == "No dormant memories."
    assert hippo.json("dormant", "anything")["results"] == []
    missing = hippo.ctl("dormant", "restore", "mem_000000000000")
    assert missing.returncode == 1 and "no dormant memory with id mem_000000000000" in missing.stderr
    assert hippo.ctl("dormant", "forget", "mem_000000000000").returncode == 1
