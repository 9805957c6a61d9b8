"""The budget holds on every surface that hands memory text out (recall.md §7): a memory longer than
what is left of the budget is cut to fit, with a marker naming its id and full size, and `inspect`
still shows it whole. Recall's text and JSON, context, the per-prompt hook as its host runs it, MCP
and HTTP, each against a real daemon holding a ~900 KB memory pasted into `hippoctl remember -`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import httpx

from e2e.http_support import serve
from e2e.mcp_support import call_ok, mcp_session
from hippod.recall.budget import tokens

if TYPE_CHECKING:
    from e2e.harness import Hippo

QUERY = "nightly ingest pipeline"
# About 900 KB: the size of a log pasted in whole.
BIG = "\n".join(
    f"Line {n:06d}: the nightly ingest pipeline wrote segment {n} of the warehouse export"
    for n in range(10_600)
)
SMALL = "Rerun the ingest pipeline after the warehouse export lands"
PINNED = "Run make check before every push"


def remember_big(hippo: Hippo) -> str:
    """Paste BIG into `hippoctl remember -` (in the global store); its id."""
    done = hippo.ctl("--json", "remember", "-", input=BIG)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def assert_cut(text: str, memory_id: str) -> None:
    """`text` holds the start of BIG and a marker naming the memory and its full size, once."""
    # (context and the hook indent a memory's continuation lines into its bullet)
    assert all(line in text for line in BIG.splitlines()[:20])
    assert text.count(f"{memory_id} is {len(BIG):,} characters ({tokens(BIG):,} tokens)") == 1
    assert f"hippoctl inspect {memory_id}" in text


def assert_whole(hippo: Hippo, memory_id: str) -> None:
    assert hippo.json("inspect", memory_id)["memory"]["content"] == BIG


def printed(done: subprocess.CompletedProcess[str]) -> str:
    """What a command printed, without the newline the client ends it with."""
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n"), done.stdout[-200:]
    return done.stdout[:-1]


def test_recall_cuts_a_memory_longer_than_the_budget(hippo: Hippo) -> None:
    hippo.start()
    memory_id = remember_big(hippo)
    for extra in ((), ("--min-results", "1"), ("--min-results", "0")):
        text = printed(hippo.ctl("recall", QUERY, "--budget", "4000", *extra))
        assert tokens(text) <= 4000
        assert text.startswith(f'Found 1 memory ({tokens(text) + 2} tokens) for: "{QUERY}"'), text[:100]
        assert_cut(text, memory_id)
        # Most of the budget goes to the memory's text: it is cut to what is left, not to a stub.
        assert tokens(text) > 3900

    reply = hippo.json("recall", QUERY, "--budget", "4000")
    [item] = reply["results"]
    assert reply["tokens"] <= 4000 and item["tokens"] <= 4000
    assert item["truncated"] is True and item["full_chars"] == len(BIG)
    assert tokens(item["content"]) <= 4000
    assert_cut(item["content"], memory_id)
    assert_whole(hippo, memory_id)


def test_min_results_keeps_memories_cut_within_the_budget(hippo: Hippo) -> None:
    hippo.start()
    first = remember_big(hippo)
    long = "The nightly ingest pipeline " + "runs long " * 3000
    second = str(hippo.json("remember", long)["id"])
    text = printed(hippo.ctl("recall", QUERY, "--budget", "2000", "--min-results", "2"))
    assert tokens(text) <= 2000 and text.startswith("Found 2 memories")
    assert_cut(text, first)
    assert f"{second} is {len(long.strip()):,} characters" in text
    # A budget too small to name even one memory holds too, and says so.
    tiny = printed(hippo.ctl("recall", QUERY, "--budget", "30", "--min-results", "1"))
    assert tiny == f'2 memories found for: "{QUERY}", but a budget of 30 tokens cannot show one'
    assert tokens(tiny) <= 30
    # context says the same, not that nothing was found.
    tiny = printed(hippo.ctl("context", QUERY, "--budget", "30"))
    assert tiny == f'2 memories found for: "{QUERY}", but a budget of 30 tokens cannot show one'


def test_context_and_the_prompt_hook_cut_it_within_their_budgets(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", PINNED, "--pin")
    hippo.ok("remember", SMALL)
    memory_id = remember_big(hippo)

    for args, budget in (((QUERY, "--budget", "4000"), 4000), (("--budget", "4000"), 4000), ((QUERY,), 1500)):
        text = printed(hippo.ctl("context", *args))
        assert tokens(text) <= budget, args
        assert_cut(text, memory_id)
        assert SMALL in text
    reply = json.loads(printed(hippo.ctl("context", QUERY, "--budget", "4000", "--format", "json")))
    assert reply["tokens"] <= 4000
    [cut] = [m for m in reply["memories"] if m["truncated"]]
    assert cut["id"] == memory_id and cut["full_chars"] == len(BIG)
    assert tokens(cut["framed"]) <= 4000
    assert_cut(cut["content"], memory_id)

    # The per-prompt hook as Claude Code runs it: /bin/sh -c, a bare PATH, no XDG_RUNTIME_DIR.
    env = {k: v for k, v in hippo.env.items() if k != "XDG_RUNTIME_DIR"}
    env["PATH"] = "/usr/bin:/bin"
    hook = f"{shlex.quote(sys.executable)} -m hippoctl context --pinned-only --include-recent 5"
    hook += " --format additional-context"
    for extra, budget in (("", 1500), (" --budget 4000", 4000)):
        payload = {"cwd": hippo.root, "hook_event_name": "UserPromptSubmit", "prompt": "where is the export?"}
        done = subprocess.run(
            ["/bin/sh", "-c", hook + extra],
            env=env,
            cwd=hippo.root,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, ""), done
        markdown = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        # The block reaches the model whole: within the budget and Claude Code's 10,000 characters.
        assert tokens(markdown) <= budget and len(markdown) <= 10_000
        assert PINNED in markdown and SMALL in markdown
        assert_cut(markdown, memory_id)
    assert_whole(hippo, memory_id)


async def test_mcp_recall_and_context_hold_the_budget(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", SMALL)
    memory_id = remember_big(hippo)
    async with mcp_session(hippo) as session:
        found = await call_ok(session, "hippo_recall", {"query": QUERY, "budget": 4000})
        block = await call_ok(session, "hippo_context", {"query": QUERY, "budget": 4000})
        default = await call_ok(session, "hippo_context", {"query": QUERY})
    for text, budget in ((found, 4000), (block, 4000), (default, 1500)):
        assert tokens(text) <= budget
        assert_cut(text, memory_id)
        assert SMALL in text
    assert_whole(hippo, memory_id)


def test_http_recall_and_context_hold_the_budget(hippo: Hippo) -> None:
    url = serve(hippo)
    hippo.ok("remember", SMALL)
    memory_id = remember_big(hippo)
    params: dict[str, Any] = {"q": QUERY, "budget": 4000}
    found = httpx.get(f"{url}/v1/memories", params=params, timeout=60)
    assert found.status_code == 200, found.text
    reply = found.json()
    assert reply["tokens"] <= 4000
    assert sum(tokens(r["content"]) for r in reply["results"]) <= 4000
    [cut] = [r for r in reply["results"] if r["truncated"]]
    assert cut["id"] == memory_id and cut["fullChars"] == len(BIG)
    assert_cut(cut["content"], memory_id)

    context = httpx.get(f"{url}/v1/context", params=params, timeout=60)
    assert context.status_code == 200, context.text
    entries = context.json()["entries"]
    assert context.json()["tokens"] <= 4000
    assert sum(tokens(e["entry"]["content"]) for e in entries) <= 4000
    [cut] = [e for e in entries if e["truncated"]]
    assert cut["entry"]["id"] == memory_id and cut["fullChars"] == len(BIG)
    assert_cut(cut["entry"]["content"], memory_id)

    whole = httpx.get(f"{url}/v1/memories/{memory_id}", timeout=60)
    assert whole.status_code == 200 and whole.json()["content"] == BIG
