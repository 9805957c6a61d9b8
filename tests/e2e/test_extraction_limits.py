"""Sleep's fact extraction at its limits, end to end against the local stub of Anthropic's Messages
API: whose memories it sends, a memory the API refuses, the spend cap counting every request, and
the phase's time limit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from model_stub import anthropic_error, anthropic_message

from e2e.extraction_support import (
    CI,
    FACTS,
    PATH,
    RELEASE,
    answer_facts,
    extraction_state,
    facts_in,
    id_of,
    note_of,
    stubbed,
)
from e2e.sleep_support import make, plant

if TYPE_CHECKING:
    from e2e.harness import Hippo

OTHER_TENANT = "Acme's customer Bob asked in a DM that his contract renewal stays confidential until May."
RAW_RECEIPT = "slack #general: Alice pasted the incident timeline for the payments outage on Friday."


def _sleep(hippo: Hippo, folder: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = hippo.ctl("--json", "sleep", "--no-share", cwd=folder, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _sent(stub: Any) -> list[str]:
    return [note_of(s.body) for s in stub.requests(PATH)]


def test_the_owners_sleep_sends_only_its_own_tenants_notes_and_never_a_raw_receipt(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        hippo.stop()
        plant(
            db,
            [
                make(OTHER_TENANT, tenant_id="acme", created="2026-01-06T00:00:00.000Z"),
                make(RAW_RECEIPT, kind="raw", source="slack", created="2026-01-07T00:00:00.000Z"),
            ],
        )
        hippo.start(env=hippo.daemon_env(**stub.env()))
        _sleep(hippo, folder)
        assert _sent(stub) == [RELEASE, CI]
        # A sleep run as tenant acme sends acme's note, and still no raw receipt.
        _sleep(hippo, folder, env={**hippo.env, "HIPPO_TENANT": "acme"})
        assert _sent(stub) == [RELEASE, CI, OTHER_TENANT]
        assert all(RAW_RECEIPT not in json.dumps(s.body) for s in stub.requests())
        marks = {m[0] for m in extraction_state(db)[1]}
        assert id_of(db, RAW_RECEIPT) not in marks


def test_a_memory_the_api_refuses_is_marked_failed_and_the_phase_goes_on(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.fail(
            PATH, 400, anthropic_error("invalid_request_error", "messages: text content blocks must be valid")
        )
        report = _sleep(hippo, folder)
        release, ci = id_of(db, RELEASE), id_of(db, CI)
        # RELEASE (newest) was refused; CI was still sent and its facts kept.
        assert _sent(stub) == [RELEASE, CI]
        assert sorted(f[0] for f in facts_in(db)) == sorted(FACTS[CI])
        marks = sorted((m[0], m[1], m[2]) for m in extraction_state(db)[1])
        assert marks == sorted([(release, 0, "failed"), (ci, 2, "sent")])
        assert report["extraction_note"] == (
            "extraction: Anthropic refused 1 memory for what it holds; marked failed, not sent again"
        )
        assert (
            "extraction: Anthropic API: HTTP 400: invalid_request_error: messages: text content blocks "
            f"must be valid; {release} is marked failed and not sent again" in report["details"]
        )
        # The next sleep buys nothing again.
        _sleep(hippo, folder)
        assert len(stub.requests(PATH)) == 2


def test_two_refusals_and_no_answer_blame_the_request_and_mark_nothing(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        for _ in range(2):
            stub.fail(PATH, 400, anthropic_error("invalid_request_error", "max_tokens: too large"))
        report = _sleep(hippo, folder)
        assert extraction_state(db) == ([], [])
        assert report["extraction_note"].startswith(
            "extraction skipped: Anthropic API: HTTP 400: invalid_request_error: max_tokens: too large;"
        )


def test_an_account_refusal_is_a_failed_phase_not_a_failed_memory(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.answer(PATH, answer_facts({"messages": [{"content": f"<note>\n{RELEASE}\n</note>"}]}))
        stub.fail(
            PATH,
            400,
            anthropic_error(
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing.",
            ),
        )
        report = _sleep(hippo, folder)
        # CI is not marked failed: the next sleep, with credit, sends both again.
        assert extraction_state(db) == ([], [])
        assert report["extraction_note"].startswith("extraction skipped: Anthropic API: HTTP 400")


def test_answers_in_before_a_transient_failure_are_not_written(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.answer(PATH, answer_facts({"messages": [{"content": f"<note>\n{RELEASE}\n</note>"}]}))
        stub.fail(PATH, 401, anthropic_error("authentication_error", "invalid x-api-key"))
        report = _sleep(hippo, folder)
        assert _sent(stub) == [RELEASE, CI]
        assert extraction_state(db) == ([], [])
        assert report["extraction_note"].startswith("extraction skipped: Anthropic API: HTTP 401")


def test_every_retry_counts_against_max_calls(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"maxCalls": 2}}) as (stub, folder, db):
        stub.fail(PATH, 529, anthropic_error("overloaded_error", "Overloaded"))
        report = _sleep(hippo, folder)
        # RELEASE took two requests (a 529, then its answer): the cap has no room for CI.
        assert _sent(stub) == [RELEASE, RELEASE]
        assert sorted(f[0] for f in facts_in(db)) == sorted(FACTS[RELEASE])
        assert report["extraction_note"] == (
            "extraction stopped at its spend cap (2 of 2 calls, 220 of 50000 tokens): "
            "1 memory left for the next sleep"
        )


def test_a_retry_the_cap_cannot_afford_is_not_made(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"maxCalls": 1}}) as (stub, folder, db):
        stub.fail(PATH, 529, anthropic_error("overloaded_error", "Overloaded"))
        report = _sleep(hippo, folder)
        assert len(stub.requests(PATH)) == 1
        assert extraction_state(db) == ([], [])
        assert report["extraction_note"] == (
            "extraction stopped at its spend cap (1 of 1 calls, 0 of 50000 tokens): "
            "2 memories left for the next sleep"
        )


@pytest.mark.long
def test_the_time_limit_stops_the_phase_and_keeps_the_answers_in(hippo: Hippo) -> None:
    # The first answer comes at once and the second never in time; the limit leaves a loaded machine
    # room for the first.
    config = {"extraction": {"maxSeconds": 6, "timeoutSeconds": 90}}
    with stubbed(hippo, config) as (stub, folder, db):
        stub.answer(PATH, answer_facts({"messages": [{"content": f"<note>\n{RELEASE}\n</note>"}]}))
        stub.answer(PATH, anthropic_message(json.dumps({"facts": FACTS[CI]})), delay_s=60.0)
        report = _sleep(hippo, folder)
        assert sorted(f[0] for f in facts_in(db)) == sorted(FACTS[RELEASE])
        assert [m[0] for m in extraction_state(db)[1]] == [id_of(db, RELEASE)]
        assert report["extraction_note"] == (
            "extraction stopped at its time limit (extraction.maxSeconds 6 s): "
            "1 memory left for the next sleep"
        )
        out = hippo.ok("sleep", "--no-share", cwd=folder).stdout
        assert id_of(db, CI) in {m[0] for m in extraction_state(db)[1]}
        assert "time limit" not in out
