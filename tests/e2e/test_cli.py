"""End-to-end: the hippoctl verbs against a real daemon, real socket and real SQLite files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from e2e.harness import Hippo

NO_PROJECT = "(no project store above {}; using the global store)"


def remember_id(hippo: Hippo, *args: str, cwd: str | None = None) -> str:
    data = hippo.json("remember", *args, cwd=cwd)
    assert re.fullmatch(r"mem_[0-9a-f]{12}", data["id"]), data
    return str(data["id"])


def test_tour(hippo: Hippo) -> None:
    pid = hippo.start()

    done = hippo.ok("remember", "Staging deploy failed: the migration step was skipped", "--error")
    match = re.match(r"Remembered \[(mem_[0-9a-f]{12})\]\n", done.stdout)
    assert match, done.stdout
    mem_id = match.group(1)
    assert "Layer: episodic | Strength: 1.00 | Half-life: 730d | Confidence: verified" in done.stdout
    assert NO_PROJECT.format(os.path.realpath(hippo.root)) in done.stderr

    done = hippo.ok("recall", "staging migration", "--why")
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Found 1 memory (") and lines[0].endswith('for: "staging migration"'), lines
    header = next(line for line in lines if line.startswith("--- "))
    assert header.startswith(f"--- {mem_id} [episodic] [verified] [global] score=")
    assert "strength=1.00" in header
    assert "██████████ tags: error" in done.stdout
    assert "Staging deploy failed: the migration step was skipped" in done.stdout
    assert "    BM25: matched [staging, migration]" in done.stdout
    assert "    multipliers: strength " in done.stdout
    assert "    envelope: kind=distilled scope=- owner=- artifact=- session=-" in done.stdout

    done = hippo.ok("outcome", "--good")
    assert done.stdout.strip() == "Applied positive outcome to 1 memory"

    done = hippo.ok("inspect", mem_id)
    assert f"id: {mem_id}" in done.stdout
    assert "outcome_positive: 1" in done.stdout
    assert "outcome_negative: 0" in done.stdout
    assert "retrieval_count: 1" in done.stdout
    assert "live strength math:" in done.stdout
    # Recalled once: half-life 730 + 2; one good mark: rf = 1 + 0.5 * 1/2 = 1.25; hl_eff = 915.
    assert "reward factor 1.2500" in done.stdout
    assert "effective half-life 915.0 d" in done.stdout
    assert "strength 1.0000 = clamp(decay " in done.stdout
    assert done.stdout.rstrip().endswith("Staging deploy failed: the migration step was skipped")

    data = hippo.json("inspect", mem_id)
    assert {"store", "memory", "math", "supersedes", "conflicts"} <= data.keys()
    assert data["memory"]["outcome_positive"] == 1
    assert data["memory"]["half_life_days"] == pytest.approx(732)
    assert data["math"]["reward_factor"] == pytest.approx(1.25)
    assert data["math"]["effective_half_life"] == pytest.approx(915.0)
    assert data["math"]["emotion"] == pytest.approx(2.0)
    assert data["math"]["strength"] == pytest.approx(1.0)
    assert data["store"] == os.path.realpath(hippo.home)

    data = hippo.json("recall", "staging")
    assert {"query", "budget", "tokens", "candidates", "skipped", "results"} <= data.keys()
    assert data["query"] == "staging"
    assert data["budget"] == 4000
    assert data["candidates"] == 1
    assert data["skipped"] == {"budget": 0, "limit": 0}
    [item] = data["results"]
    assert item["id"] == mem_id and item["source"] == "global"
    assert item["retrieval_count"] in (1, 2)  # before or after this recall's strengthening
    assert "error" in item["tags"]
    assert hippo.json("inspect", mem_id)["memory"]["retrieval_count"] == 2

    done = hippo.ok("status")
    assert f"global store: {os.path.realpath(hippo.home)}" in done.stdout
    assert "memories: 1 (episodic 1)" in done.stdout
    data = hippo.json("status")
    [store] = data["stores"]
    assert store["kind"] == "global" and store["total"] == 1 and store["layers"] == {"episodic": 1}
    assert store["total_remembered"] >= 1

    done = hippo.ok("daemon", "status")
    assert re.match(rf"hippod \S+ \(protocol 1\), pid {pid}, up ", done.stdout), done.stdout
    assert f"socket:  {hippo.socket} (socket activation: no)" in done.stdout
    data = hippo.json("daemon", "status")
    assert {"version", "protocol", "pid", "started_at", "uptime_s", "home", "socket", "stores"} <= data.keys()
    assert data["pid"] == pid and data["socket"] == hippo.socket and data["protocol"] == 1
    assert [s["kind"] for s in data["stores"]] == ["global"]

    done = hippo.ok("version")
    assert re.match(r"hippoctl \S+ \(protocol 1\)\n", done.stdout), done.stdout
    assert f"pid {pid}" in done.stdout
    data = hippo.json("version")
    assert data["protocol"] == 1 and data["daemon"]["pid"] == pid


USAGE_CASES = [
    pytest.param(["remember", ""], None, id="empty-text"),
    pytest.param(["remember", "   "], None, id="whitespace-text"),
    pytest.param(["remember", "ab"], None, id="two-chars"),
    pytest.param(["remember", "  ab \n"], None, id="two-chars-after-trim"),
    pytest.param(["remember", "-"], "x" * (1024 * 1024 + 16), id="over-1MiB-stdin"),
    pytest.param(["teleport", "now"], None, id="unknown-verb"),
    pytest.param(["outcome"], None, id="outcome-without-mark"),
    pytest.param(["outcome", "--good", "--bad"], None, id="outcome-both-marks"),
    pytest.param(["recall", "  "], None, id="empty-query"),
    pytest.param(["recall", "!! ? a"], None, id="query-without-words"),
    pytest.param(["remember", "valid text", "--owner", "nobody"], None, id="bad-owner"),
    pytest.param(["remember", "valid text", "--artifact-ref", "no scheme"], None, id="bad-artifact-ref"),
    pytest.param(["--timeout", "0", "status"], None, id="zero-timeout"),
    pytest.param(["remember", "text \udcff here"], None, id="not-utf8"),
    pytest.param([], None, id="no-verb"),
]


def test_usage_errors_exit_2_without_connecting(hippo: Hippo) -> None:
    for case in USAGE_CASES:
        args, stdin = case.values
        done = hippo.ctl("--no-spawn", *args, input=stdin)
        assert done.returncode == 2, (case.id, done.returncode, done.stderr)
        assert done.stdout == "", case.id
        assert len(done.stderr.strip().splitlines()) == 1, (case.id, done.stderr)
        assert done.stderr.startswith("hippoctl: error:"), (case.id, done.stderr)
    # Nothing was spawned and nothing was stored.
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.db)
    hippo.start()
    for case in USAGE_CASES:
        args, stdin = case.values
        done = hippo.ctl(*args, input=stdin)
        assert done.returncode == 2, (case.id, done.returncode, done.stderr)
    data = hippo.json("status")
    assert [s["total"] for s in data["stores"]] == [0]


def test_remember_exactly_1mib_from_stdin_is_accepted(hippo: Hippo) -> None:
    hippo.start()
    text = "lorem ipsum " * (1024 * 1024 // 12) + "x" * (1024 * 1024 % 12)
    assert len(text.encode()) == 1024 * 1024
    done = hippo.ctl("--json", "remember", "-", input=text)
    assert done.returncode == 0, done.stderr
    mem_id = json.loads(done.stdout)["id"]
    data = hippo.json("inspect", mem_id)
    assert data["memory"]["content"] == text.strip()


def test_project_store_and_global_merge(hippo: Hippo) -> None:
    hippo.start()
    project = os.path.join(hippo.root, "proj")
    deep = os.path.join(project, "src", "deeper")
    elsewhere = os.path.join(hippo.root, "elsewhere")
    os.makedirs(deep)
    os.makedirs(elsewhere)
    store = os.path.realpath(os.path.join(project, ".hippo"))

    done = hippo.ok("init", cwd=project)
    assert done.stdout.splitlines()[0] == f"Initialized Hippo at {store}"
    assert os.path.isfile(os.path.join(store, "hippo.db"))
    assert hippo.ok("init", cwd=project).stdout.splitlines()[0] == f"Hippo already initialized at {store}"

    done = hippo.ok("--json", "remember", "Quokka builds need the vendored toolchain", cwd=deep)
    assert json.loads(done.stdout)["store"] == store
    assert "no project store" not in done.stderr
    assert "path:deeper" in json.loads(done.stdout)["tags"]
    status = hippo.json("status", cwd=deep)
    totals = {s["kind"]: s["total"] for s in status["stores"]}
    assert totals == {"project": 1, "global": 0}
    # -C acts as if run from that folder.
    data = hippo.json("-C", deep, "remember", "Quokka tests run nightly", cwd=elsewhere)
    assert data["store"] == store
    hippo.ok("forget", data["id"], cwd=deep)

    same = "Wombat cache must be cleared before the release build"
    local_id = remember_id(hippo, same, cwd=project)
    global_id = remember_id(hippo, "--global", same, cwd=project)
    assert local_id != global_id
    other_global = remember_id(hippo, "--global", "Wombat release notes live in the wiki", cwd=project)

    data = hippo.json("recall", "wombat cache release", cwd=deep)
    ids = [r["id"] for r in data["results"]]
    assert local_id in ids and global_id not in ids, data
    assert other_global in ids
    sources = {r["id"]: r["source"] for r in data["results"]}
    assert sources[local_id] == "local" and sources[other_global] == "global"

    done = hippo.ok("recall", "wombat cache release", "--why", cwd=deep)
    headers = [line for line in done.stdout.splitlines() if line.startswith("--- ")]
    by_id = {line.split()[1]: line for line in headers}
    assert "[local]" in by_id[local_id] and "[global]" not in by_id[local_id]
    assert "[global]" in by_id[other_global]
    assert global_id not in done.stdout

    # From outside the project only the global store is searched: the global copy shows.
    data = hippo.json("recall", "wombat cache release", cwd=elsewhere)
    ids = [r["id"] for r in data["results"]]
    assert global_id in ids and local_id not in ids

    done = hippo.ok("remember", "Numbat logs rotate at midnight", cwd=elsewhere)
    assert NO_PROJECT.format(os.path.realpath(elsewhere)) in done.stderr
    assert done.stderr.count("no project store above") == 1
    done = hippo.ok("remember", "--global", "Numbat logs are kept for ninety days", cwd=elsewhere)
    assert "no project store" not in done.stderr

    status = hippo.json("status", cwd=project)
    totals = {s["kind"]: s["total"] for s in status["stores"]}
    assert totals == {"project": 2, "global": 4}


def test_markdown_mirror_follows_remember_and_forget(hippo: Hippo) -> None:
    hippo.start()
    content = "Platypus service retries three times before paging"
    mem_id = remember_id(hippo, content)
    mirror = os.path.join(hippo.home, "episodic", f"{mem_id}.md")
    assert hippo.wait_for(lambda: os.path.exists(mirror), timeout=10), "mirror was not written"
    text = Path(mirror).read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front, body = text[4:].split("\n---\n\n", 1)
    assert f"id: {mem_id}" in front.splitlines()
    assert "layer: episodic" in front.splitlines()
    assert body == content + "\n"

    done = hippo.ok("forget", mem_id)
    assert done.stdout.strip() == f"Forgot [{mem_id}]"
    assert hippo.wait_for(lambda: not os.path.exists(mirror), timeout=10), "mirror survived forget"
    assert hippo.ctl("inspect", mem_id).returncode == 1


def test_fake_now_drives_decay(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-01-01T00:00:00Z")
    plain = remember_id(hippo, "Echidna batch jobs run on the blue cluster")
    error = remember_id(hippo, "Echidna batch jobs crash without swap", "--error")
    data = hippo.json("inspect", plain)
    assert data["memory"]["created"].startswith("2026-01-01T00:00:00")
    assert hippo.stop() == 0

    hippo.start(fake_now="2028-01-01T00:00:00Z")
    data = hippo.json("inspect", plain)
    assert data["math"]["days_since_retrieved"] == pytest.approx(730.0)
    assert data["math"]["strength"] == pytest.approx(0.25, abs=1e-3)
    data = hippo.json("inspect", error)
    assert data["memory"]["half_life_days"] == pytest.approx(730)
    assert data["math"]["strength"] == pytest.approx(1.0, abs=1e-3)
    status = hippo.json("status")
    assert status["stores"][0]["at_risk"] == 0
    assert status["stores"][0]["mean_strength"] == pytest.approx(0.625, abs=1e-3)


def test_log_never_holds_memory_text_or_query(hippo: Hippo) -> None:
    hippo.start(env=hippo.daemon_env(HIPPO_LOG_LEVEL="debug"))
    secret_text = "Zyxwvut-memory-canary-4417 lives in the vault"
    secret_query = "Qponmlk-query-canary-8821"
    mem_id = remember_id(hippo, secret_text)
    hippo.ok("recall", secret_query)
    hippo.ok("recall", "Zyxwvut-memory-canary-4417")
    hippo.ok("inspect", mem_id)
    hippo.ctl("remember", secret_text + " again", "--owner", "nobody")  # refused by the daemon
    hippo.ok("forget", mem_id)
    assert hippo.stop() == 0
    log = Path(hippo.log).read_text(encoding="utf-8")
    assert "listening on" in log  # the log is really this daemon's
    for needle in ("Zyxwvut", "Qponmlk", "canary"):
        assert needle not in log


def test_budget_that_fits_exactly_prints_no_cutoff(hippo: Hippo) -> None:
    """The heading is always budgeted; room for a cutoff line only when something is left out."""
    hippo.start()
    hippo.ok("remember", "Quokkas smile because of their jaw shape")
    first = hippo.json("recall", "quokkas jaw")
    exact = first["tokens"]
    done = hippo.ok("recall", "quokkas jaw", "--budget", str(exact))
    assert "Cutoff" not in done.stdout
    assert hippo.json("recall", "quokkas jaw", "--budget", str(exact))["tokens"] <= exact
    hippo.ok("remember", "Quokkas live on Rottnest Island and jaw at tourists")
    both = hippo.json("recall", "quokkas jaw", "--budget", str(exact), "--min-results", "0")
    assert both["skipped"]["budget"] >= 1
    assert both["tokens"] <= exact
