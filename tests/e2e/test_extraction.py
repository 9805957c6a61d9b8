"""Sleep's fact extraction end to end: the real daemon sends memories to a local stub of Anthropic's
Messages API (tests/model_stub.py) and writes what comes back in its one transaction."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest
from model_stub import KEYS, anthropic_error, anthropic_message

from e2e.extraction_support import (
    CI,
    FACTS,
    PATH,
    RELEASE,
    SECRET_TAGGED,
    SECRET_TEXT,
    extraction_state,
    facts_in,
    id_of,
    note_of,
    stubbed,
)

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _sleep(hippo: Hippo, folder: str) -> dict[str, Any]:
    return dict(hippo.json("sleep", "--no-share", cwd=folder))


def test_facts_become_tagged_linked_inferred_memories_and_a_second_sleep_sends_nothing(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        report = _sleep(hippo, folder)
        ci, release = id_of(db, CI), id_of(db, RELEASE)
        seen = stub.requests(PATH)
        # Newest first, the secret-flagged ones never sent.
        assert [note_of(s.body) for s in seen] == [RELEASE, CI]
        first = seen[0]
        assert first.headers["x-api-key"] == KEYS["ANTHROPIC_API_KEY"]
        assert first.headers["anthropic-version"] == "2023-06-01"
        assert first.body["model"] == "claude-sonnet-4-6"
        assert '{"facts": [' in first.body["system"] and first.body["max_tokens"] == 1024
        facts = facts_in(db)
        expected = sorted(
            (fact, source) for source, texts in ((ci, FACTS[CI]), (release, FACTS[RELEASE])) for fact in texts
        )
        assert [(f[0], f[2]) for f in facts] == expected
        for _, tags, source, confidence, origin, parents, layer in facts:
            assert json.loads(tags) == ["extracted"]
            assert (confidence, origin, layer) == ("inferred", "extraction", "episodic")
            assert json.loads(parents) == [source]
        assert report["extracted"] == 4 and report["extraction_sent"] == 2
        assert report["extraction_note"] is None
        assert f"extracted {id_of(db, FACTS[CI][1])} from {ci}" in report["details"]
        # The sources stay, and recall shows a fact in place of the memory it came from.
        recalled = hippo.json("recall", "release tags Tuesday", cwd=folder)
        ids = [r["id"] for r in recalled["results"]]
        assert release not in ids
        assert any(r["content"] == FACTS[RELEASE][0] for r in recalled["results"])

        again = _sleep(hippo, folder)
        assert len(stub.requests(PATH)) == 2  # nothing sent again
        assert again["extracted"] == 0 and len(facts_in(db)) == 4
        assert all(SECRET_TEXT not in json.dumps(s.body) for s in stub.requests())
        assert all(SECRET_TAGGED not in json.dumps(s.body) for s in stub.requests())
        # What was sent is marked processed; the secret-flagged rows are not (never sent, never marked).
        marks = extraction_state(db)[1]
        assert sorted((m[0], m[1], m[2]) for m in marks) == sorted([(ci, 2, "sent"), (release, 2, "sent")])


def test_forgetting_a_source_forgets_its_facts(hippo: Hippo) -> None:
    with stubbed(hippo) as (_stub, folder, db):
        _sleep(hippo, folder)
        ci, release = id_of(db, CI), id_of(db, RELEASE)
        hippo.ok("forget", release, cwd=folder)
        # The facts paraphrase what was forgotten: they go in the same transaction; the other
        # source's facts and marks stay.
        assert sorted(f[0] for f in facts_in(db)) == sorted(FACTS[CI])
        assert [m[0] for m in extraction_state(db)[1]] == [ci]


def test_rejecting_a_source_rejects_its_facts_but_a_pinned_one_stays(hippo: Hippo) -> None:
    with stubbed(hippo) as (_stub, folder, db):
        _sleep(hippo, folder)
        kept = id_of(db, FACTS[RELEASE][1])
        with sqlite3.connect(db) as conn:  # pinned by hand: no verb pins a stored memory
            conn.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (kept,))
        hippo.ok("reject", "--value", RELEASE, "--reason", "moved to Thursdays", cwd=folder)
        assert sorted(f[0] for f in facts_in(db)) == sorted([*FACTS[CI], FACTS[RELEASE][1]])


def test_the_summary_names_what_was_extracted(hippo: Hippo) -> None:
    with stubbed(hippo) as (_stub, folder, _db):
        out = hippo.ok("sleep", "--no-share", cwd=folder).stdout
        assert "Extracted 4 facts from 2 memories through Anthropic's API (tagged `extracted`)." in out


def test_rejected_facts_and_near_copies_are_refused(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        hippo.ok("reject", "--value", FACTS[RELEASE][0], "--reason", "moved to Thursdays", cwd=folder)
        hippo.ok("remember", "The frontend build pins Node 20", cwd=folder)
        report = _sleep(hippo, folder)
        stored = [f[0] for f in facts_in(db)]
        assert FACTS[RELEASE][0] not in stored and FACTS[CI][1] not in stored
        assert sorted(stored) == sorted([FACTS[CI][0], FACTS[RELEASE][1]])
        assert report["extracted"] == 2
        assert "extraction refused 1 rejected fact and 1 near-copy of stored memories" in report["details"]
        assert len(stub.requests(PATH)) == 3  # the remembered line too, newest first


def _fail_401(stub: Any) -> None:
    stub.fail(PATH, 401, anthropic_error("authentication_error", "invalid x-api-key"))


def _fail_429(stub: Any) -> None:
    for _ in range(3):
        stub.fail(
            PATH,
            429,
            anthropic_error("rate_limit_error", "Number of requests exceeded"),
            {"retry-after": "1"},
        )


def _fail_529(stub: Any) -> None:
    for _ in range(3):
        stub.fail(PATH, 529, anthropic_error("overloaded_error", "Overloaded"))


def _time_out(stub: Any) -> None:
    for _ in range(3):
        stub.answer(PATH, anthropic_message('{"facts": []}'), delay_s=3.0)


@pytest.mark.parametrize(
    ("plan", "reason", "calls"),
    [
        (
            _fail_401,
            "Anthropic API: HTTP 401 (the key was refused): authentication_error: invalid x-api-key",
            1,
        ),
        (
            _fail_429,
            "Anthropic API: HTTP 429 (rate limited, still after retries): rate_limit_error: "
            "Number of requests exceeded",
            3,
        ),
        (
            _fail_529,
            "Anthropic API: HTTP 529 (overloaded, still after retries): overloaded_error: Overloaded",
            3,
        ),
        (_time_out, "Anthropic API: no answer within 1 s", 3),
    ],
    ids=["401", "429", "529", "timeout"],
)
def test_a_failed_call_leaves_the_store_as_it_was_and_says_why(
    hippo: Hippo, plan: Any, reason: str, calls: int
) -> None:
    with stubbed(hippo, {"extraction": {"timeoutSeconds": 1}}) as (stub, folder, db):
        plan(stub)
        done = hippo.ctl("--json", "sleep", "--no-share", cwd=folder, timeout=60)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        note = f"extraction skipped: {reason}; nothing was stored from it, and the next sleep tries again"
        assert report["extraction_note"] == note and note in report["details"]
        assert report["extracted"] == 0
        assert extraction_state(db) == ([], [])
        assert len(stub.requests(PATH)) == calls  # the first memory's tries, then the phase stops
        # The rest of the sleep ran: the run is recorded.
        assert report["active"] == 4
        # The plain summary says it too, and the next sleep sends the same memories again.
        if plan is _fail_401:
            _fail_401(stub)
            out = hippo.ok("sleep", "--no-share", cwd=folder).stdout
            assert f"Extraction skipped: {reason}; nothing was stored" in out
            assert extraction_state(db) == ([], [])
            _sleep(hippo, folder)
            assert len(facts_in(db)) == 4


def test_extraction_turned_off_sends_nothing_even_with_the_key(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"enabled": False}}) as (stub, folder, db):
        report = _sleep(hippo, folder)
        assert stub.requests() == [] and report["extracted"] == 0
        assert extraction_state(db) == ([], [])


def test_without_the_key_nothing_is_sent(hippo: Hippo) -> None:
    with stubbed(hippo, key=False) as (stub, folder, db):
        report = _sleep(hippo, folder)
        assert stub.requests() == [] and report["extraction_note"] is None
        assert extraction_state(db) == ([], [])


def test_turned_on_without_the_key_says_so_and_sends_nothing(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"enabled": True}}, key=False) as (stub, folder, _db):
        report = _sleep(hippo, folder)
        assert stub.requests() == []
        assert report["extraction_note"] == (
            "extraction skipped: it is on, but ANTHROPIC_API_KEY is not in the daemon's environment"
        )


def test_a_dry_run_sends_nothing(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        report = hippo.json("sleep", "--dry-run", "--no-share", cwd=folder)
        assert stub.requests() == []
        assert report["extraction_note"] == (
            f"extraction would send 2 memories to {stub.url} with claude-sonnet-4-6"
        )
        assert extraction_state(db) == ([], [])


def test_the_spend_cap_leaves_the_rest_for_the_next_sleep(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"maxCalls": 1}}) as (stub, folder, db):
        first = _sleep(hippo, folder)
        assert len(stub.requests(PATH)) == 1
        assert first["extraction_note"] == (
            "extraction stopped at its spend cap (1 of 1 calls, 220 of 50000 tokens): "
            "1 memory left for the next sleep"
        )
        assert [f[0] for f in facts_in(db)] == sorted(FACTS[RELEASE])
        second = _sleep(hippo, folder)
        assert [note_of(s.body) for s in stub.requests(PATH)] == [RELEASE, CI]
        assert second["extracted"] == 2 and second["extraction_note"] is None
        _sleep(hippo, folder)
        assert len(stub.requests(PATH)) == 2


def test_the_token_cap_stops_the_calls(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"maxTokens": 100}}) as (stub, folder, _db):
        report = _sleep(hippo, folder)
        # The first call's 220 tokens pass the cap: no second call.
        assert len(stub.requests(PATH)) == 1
        assert report["extraction_note"].startswith(
            "extraction stopped at its spend cap (1 of 20 calls, 220 of 100"
        )


def test_doctor_names_what_sleep_sends_and_where(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"maxCalls": 7}}) as (_stub, folder, _db):
        report = hippo.ctl("--json", "doctor", cwd=folder)
        checks = {c["name"]: c for c in json.loads(report.stdout)["checks"]}
        network = checks["Network"]
        assert network["status"] == "warn"
        assert (
            'sleep sends up to 20 memories\' text of the tenant it runs for ("default" for the daily '
            "sleep, never raw Slack or GitHub receipts) to "
            f"{_stub.url} with claude-sonnet-4-6 (at most 7 calls, each retry one, 50000 tokens and 120 s "
            "a sleep) from the store at " in network["message"]
        )
        assert (
            f"hippoctl refine <id> sends the one memory you name to {_stub.url} when you run it"
            in (network["message"])
        )
