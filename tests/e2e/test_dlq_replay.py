"""`slack dlq replay` and `github dlq replay` (integrations.md §10) against a real daemon receiving
signed deliveries: each dead letter applied once by the live path, whatever replays or redeliveries
race it; deletions at the source and rejections honoured; a letter that still fails kept."""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from typing import TYPE_CHECKING, Any

import httpx

from e2e.http_support import body, github_headers, serve
from e2e.test_webhooks import GITHUB, GITHUB_PATH, SLACK, _issue, _post_slack, _slack_message

if TYPE_CHECKING:
    from e2e.harness import Hippo

STRANGER = "T0TEAM001"  # the team of _slack_message, unmapped until a test maps it


def _sql(hippo: Hippo, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(hippo.db) as conn:
        return [tuple(r) for r in conn.execute(statement, args)]


def _open(hippo: Hippo, **env: str) -> str:
    """The listener, with Slack and GitHub mapped to tenants so that STRANGER and installation 42
    are unroutable: their deliveries become dead letters until a test maps them."""
    hippo.start()
    hippo.stop()
    _sql(hippo, "INSERT INTO slack_workspaces VALUES ('T0KNOWN01', 'default', '2026-01-01T00:00:00Z')")
    _sql(hippo, "INSERT INTO github_installations VALUES ('7', 'default', '2026-01-01T00:00:00Z')")
    return serve(hippo, SLACK_SIGNING_SECRET=SLACK, GITHUB_WEBHOOK_SECRET=GITHUB, **env)


def _map_slack(hippo: Hippo, team: str = STRANGER) -> None:
    _sql(hippo, "INSERT INTO slack_workspaces VALUES (?, 'default', '2026-01-02T00:00:00Z')", team)


def _live(hippo: Hippo, ref_like: str) -> list[tuple[Any, ...]]:
    """The live raw memories of the items whose artifact_ref matches."""
    return _sql(
        hippo, "SELECT id, content FROM memories WHERE kind = 'raw' AND artifact_ref LIKE ?", ref_like
    )


def _replay(hippo: Hippo, source: str, *args: str, code: int = 0) -> dict[str, Any]:
    """`<source> dlq replay --json`'s reply; it exits 1 when a letter still fails."""
    done = hippo.ctl("--json", source, "dlq", "replay", *args)
    assert done.returncode == code, done.stderr
    return dict(json.loads(done.stdout))


def test_a_letter_is_replayed_once_beside_replays_and_redeliveries(hippo: Hippo) -> None:
    url = _open(hippo)
    first = _slack_message("EvR1", "The release branch is cut every Tuesday", ts="1700000001.000100")
    second = _slack_message("EvR2", "Staging runs the nightly build at 2am", ts="1700000002.000100")
    with httpx.Client(base_url=url) as client:
        assert _post_slack(client, first).json()["status"] == "dlq"
        assert _post_slack(client, second).json()["status"] == "dlq"
        listed = hippo.json("slack", "dlq", "list")["letters"]
        assert [d["bucket"] for d in listed] == ["unroutable", "unroutable"]
        # Not routable yet: the replay fails, the letters stay with one more attempt each.
        still = _replay(hippo, "slack", code=1)
        assert [(d["status"], d["retry_count"]) for d in still["letters"]] == [("failed", 1), ("failed", 1)]
        _map_slack(hippo)
        dry = _replay(hippo, "slack", "--dry-run")
        assert [d["status"] for d in dry["letters"]] == ["would_ingest", "would_ingest"]
        assert _live(hippo, "slack://%") == []
        # Slack retries the second event itself, now routed: the replay finds it applied.
        live = _post_slack(client, second).json()
        assert live["status"] == "ingested"
        done = _replay(hippo, "slack")
        assert [d["status"] for d in done["letters"]] == ["ingested", "duplicate"]
        assert done["letters"][1]["memory_id"] == live["memoryId"]
        assert done["counts"] == {"ingested": 1, "duplicate": 1}
        assert sorted(c for _, c in _live(hippo, "slack://%")) == [
            "Staging runs the nightly build at 2am",
            "The release branch is cut every Tuesday",
        ]
        # Twice: nothing left to replay; a later redelivery of a replayed event is a duplicate.
        assert hippo.json("slack", "dlq", "list")["letters"] == []
        assert _replay(hippo, "slack")["letters"] == []
        assert "No slack dead letters to replay." in hippo.ok("slack", "dlq", "replay").stdout
        assert _post_slack(client, first).json()["status"] == "duplicate"
        assert len(_live(hippo, "slack://%")) == 2
        assert _sql(hippo, "SELECT replay_status FROM dead_letters ORDER BY id") == [
            ("ingested",),
            ("duplicate",),
        ]


def test_a_replay_racing_a_live_redelivery_stores_the_event_once(hippo: Hippo) -> None:
    url = _open(hippo)
    events = [
        _slack_message(f"EvRace{n}", f"Race message number {n} about the cache", ts=f"17000001{n:02d}.000100")
        for n in range(8)
    ]
    with httpx.Client(base_url=url) as client:
        for event in events:
            assert _post_slack(client, event).json()["status"] == "dlq"
        _map_slack(hippo)
        replays: list[dict[str, Any]] = []
        racer = threading.Thread(target=lambda: replays.append(_replay(hippo, "slack")))
        racer.start()
        answers = [_post_slack(client, event).json()["status"] for event in reversed(events)]
        racer.join(60)
    assert set(answers) <= {"ingested", "duplicate"}
    statuses = [d["status"] for d in replays[0]["letters"]]
    assert set(statuses) <= {"ingested", "duplicate"}
    # Each event stored once, by one of the two, and every letter done.
    assert answers.count("ingested") + statuses.count("ingested") == len(events)
    assert len(_live(hippo, "slack://%")) == len(events)
    assert _sql(hippo, "SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL") == [(0,)]


def test_a_message_deleted_at_the_source_since_is_not_brought_back(hippo: Hippo) -> None:
    url = _open(hippo)
    secret = _slack_message(
        "EvDel1", "Posted by mistake: the old admin password hint", ts="1700000300.000100"
    )
    with httpx.Client(base_url=url) as client:
        assert _post_slack(client, secret).json()["status"] == "dlq"
        _map_slack(hippo)
        deleted = _slack_message(
            "EvDel2", "", subtype="message_deleted", deleted_ts="1700000300.000100", ts="1700000310.000100"
        )
        assert _post_slack(client, deleted).json()["status"] == "not_found"
    done = _replay(hippo, "slack")
    assert [d["status"] for d in done["letters"]] == ["deleted"]
    assert _live(hippo, "slack://%") == []
    assert _sql(hippo, "SELECT count(*) FROM memories WHERE content LIKE '%admin password%'") == [(0,)]


def test_a_rejected_text_stays_rejected(hippo: Hippo) -> None:
    url = _open(hippo)
    text = "Deploys go out on Friday evenings without review"
    with httpx.Client(base_url=url) as client:
        assert (
            _post_slack(client, _slack_message("EvRej1", text, ts="1700000400.000100")).json()["status"]
            == "dlq"
        )
    hippo.ok("reject", "--value", text, "--reason", "never true here")
    _map_slack(hippo)
    done = _replay(hippo, "slack")
    assert [d["status"] for d in done["letters"]] == ["rejected"]
    assert _sql(hippo, "SELECT count(*) FROM memories WHERE content = ?", text) == [(0,)]
    assert hippo.json("slack", "dlq", "list")["letters"] == []


def test_a_letter_that_still_fails_stays_with_its_error_and_attempts(hippo: Hippo) -> None:
    url = _open(hippo)
    with httpx.Client(base_url=url) as client:
        shapeless = {"type": "event_callback", "team_id": "T0KNOWN01", "event_id": "EvBad1", "event": {}}
        assert _post_slack(client, shapeless).json()["status"] == "dlq"
    for attempt in (1, 2):
        [letter] = _replay(hippo, "slack", code=1)["letters"]
        assert (letter["status"], letter["retry_count"]) == ("failed", attempt)
        assert letter["error"] == "the event has no type"
    [listed] = hippo.json("slack", "dlq", "list")["letters"]
    assert (listed["error"], listed["retry_count"]) == ("the event has no type", 2)
    assert hippo.ctl("slack", "dlq", "replay", "--id", "999").returncode == 1
    assert hippo.ctl("slack", "dlq", "replay", "--id", "0").returncode == 2


def test_github_letters_replay_once_by_their_delivery_id(hippo: Hippo) -> None:
    url = _open(hippo)
    delivery = str(uuid.uuid4())
    payload = _issue("opened", 12, "Login times out behind the proxy", "Seen on the VPN only")
    payload["installation"] = {"id": 42}
    raw = body(payload)
    with httpx.Client(base_url=url) as client:
        sent = client.post(GITHUB_PATH, content=raw, headers=github_headers(GITHUB, raw, "issues", delivery))
        assert sent.json()["status"] == "dlq"
        _sql(hippo, "INSERT INTO github_installations VALUES ('42', 'default', '2026-01-02T00:00:00Z')")
        done = _replay(hippo, "github")
        assert [d["status"] for d in done["letters"]] == ["ingested"]
        assert _replay(hippo, "github")["letters"] == []
        again = client.post(GITHUB_PATH, content=raw, headers=github_headers(GITHUB, raw, "issues", delivery))
        assert again.json()["status"] == "duplicate"
    assert len(_live(hippo, "gh://%/issues/12")) == 1
