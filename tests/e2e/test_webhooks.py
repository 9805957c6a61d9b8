"""Slack and GitHub webhooks with deliveries signed and shaped as Slack and GitHub send them
(integrations.md §10): signatures before parsing, replays refused, each delivery applied once, edits
and deletions at the source honoured, private scopes hidden, dead letters kept."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import parse_qs, urlparse

import httpx
from hippo_memory import HippoSync

from e2e.http_support import body, github_headers, serve, slack_headers

if TYPE_CHECKING:
    from e2e.harness import Hippo

SLACK = "slack-signing-secret"
GITHUB = "github-webhook-secret"
SLACK_PATH = "/v1/connectors/slack/events"
GITHUB_PATH = "/v1/connectors/github/events"


def _slack_message(
    event_id: str, text: str, *, ts: str = "1700000000.000100", **event: Any
) -> dict[str, Any]:
    """An Events API `event_callback` carrying a channel message (api.slack.com/events/message)."""
    inner = {
        "type": "message",
        "channel": "C0PUBLIC1",
        "channel_type": "channel",
        "user": "U0ANA0001",
        "text": text,
        "ts": ts,
        "event_ts": ts,
    }
    inner.update(event)
    return {
        "token": "unused-verification-token",
        "team_id": "T0TEAM001",
        "api_app_id": "A0APP0001",
        "event": inner,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000000,
    }


def _post_slack(client: httpx.Client, payload: dict[str, Any], **kwargs: Any) -> httpx.Response:
    raw = body(payload)
    return client.post(SLACK_PATH, content=raw, headers=slack_headers(SLACK, raw, **kwargs))


def _rows(hippo: Hippo, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(hippo.db) as conn:
        return [tuple(r) for r in conn.execute(sql, args)]


def test_a_missing_secret_answers_503_and_a_bad_signature_401_before_parsing(hippo: Hippo) -> None:
    url = serve(hippo)
    with httpx.Client(base_url=url) as client:
        for path in (SLACK_PATH, GITHUB_PATH):
            refused = client.post(path, content=b"{}")
            assert refused.status_code == 503 and refused.json()["code"] == "connector_not_configured"
    hippo.stop()
    url = serve(hippo, SLACK_SIGNING_SECRET=SLACK, GITHUB_WEBHOOK_SECRET=GITHUB)
    payload = _slack_message("Ev001", "Signed messages only")
    raw = body(payload)
    with httpx.Client(base_url=url) as client:
        unsigned = client.post(SLACK_PATH, content=raw)
        forged = client.post(SLACK_PATH, content=raw, headers=slack_headers("not-the-secret", raw))
        stale = client.post(
            SLACK_PATH, content=raw, headers=slack_headers(SLACK, raw, int(time.time()) - 301)
        )
        # Signed for other bytes: the signature covers the exact body received.
        tampered = client.post(SLACK_PATH, content=raw + b" ", headers=slack_headers(SLACK, raw))
        garbage = client.post(SLACK_PATH, content=b"\xff not json", headers={"X-Slack-Signature": "v0=00"})
        github_forged = client.post(
            GITHUB_PATH, content=raw, headers=github_headers("wrong", raw, "issues", str(uuid.uuid4()))
        )
        for refused in (unsigned, forged, stale, tampered, garbage, github_forged):
            assert refused.status_code == 401 and refused.json()["code"] == "invalid_signature", refused.text
        handshake = body(
            {"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
        )
        answered = client.post(SLACK_PATH, content=handshake, headers=slack_headers(SLACK, handshake))
        assert answered.json() == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
        ping = body({"zen": "Keep it logically awesome.", "hook_id": 1})
        pong = client.post(GITHUB_PATH, content=ping, headers=github_headers(GITHUB, ping, "ping", "d-ping"))
        assert pong.json() == {"pong": True}
    assert _rows(hippo, "SELECT count(*) FROM memories") == [(0,)]
    assert _rows(hippo, "SELECT count(*) FROM dead_letters") == [(0,)]


def test_slack_messages_once_edits_replace_deletions_archive(hippo: Hippo) -> None:
    url = serve(hippo, SLACK_SIGNING_SECRET=SLACK)
    with httpx.Client(base_url=url) as client:
        first = _post_slack(client, _slack_message("Ev100", "The staging database moved to the new cluster"))
        assert first.status_code == 200 and first.json()["status"] == "ingested"
        memory_id = first.json()["memoryId"]
        again = _post_slack(client, _slack_message("Ev100", "The staging database moved to the new cluster"))
        assert again.json() == {
            "ok": True,
            "status": "duplicate",
            "memoryId": memory_id,
            "archivedCount": None,
        }
        edit = _slack_message(
            "Ev101",
            "",
            subtype="message_changed",
            message={
                "type": "message",
                "user": "U0ANA0001",
                "text": "The staging database moved to cluster B",
                "ts": "1700000000.000100",
            },
            previous_message={
                "type": "message",
                "user": "U0ANA0001",
                "text": "The staging database moved to the new cluster",
                "ts": "1700000000.000100",
            },
            ts="1700000050.000200",
        )
        edited = _post_slack(client, edit).json()
        assert edited["status"] == "ingested" and edited["archivedCount"] == 1
        bot = _post_slack(
            client,
            _slack_message("Ev102", "Deploy bot says hi", subtype="bot_message", bot_id="B01", user=None),
        )
        assert bot.json()["status"] == "skipped"
        private = _post_slack(
            client,
            _slack_message(
                "Ev103",
                "Salary bands for the platform team",
                channel="G0PRIVATE",
                channel_type="group",
                ts="1700000100.000300",
            ),
        )
        assert private.json()["status"] == "ingested"
    with HippoSync(base_url=url) as sdk:
        found = sdk.recall(q="staging database cluster")
        assert [r.content for r in found.results] == ["The staging database moved to cluster B"]
        assert sdk.recall(q="salary bands platform team").results == []  # private: hidden
        shown = sdk.recall(q="salary bands platform team", scope="slack:private:G0PRIVATE").results
        assert [r.content for r in shown] == ["Salary bands for the platform team"]
    row = _rows(
        hippo, "SELECT kind, content, scope, owner, artifact_ref FROM memories WHERE id = ?", memory_id
    )
    assert row == [
        (
            "archived",
            "",
            "slack:public:C0PUBLIC1",
            "user:U0ANA0001",
            "slack://T0TEAM001/C0PUBLIC1/1700000000.000100",
        )
    ]
    assert "moved to the new cluster" not in json.dumps(_rows(hippo, "SELECT * FROM raw_archive"))
    with httpx.Client(base_url=url) as client:
        deleted = _slack_message(
            "Ev104", "", subtype="message_deleted", deleted_ts="1700000000.000100", ts="1700000200.000400"
        )
        assert _post_slack(client, deleted).json()["status"] == "archived"
    with HippoSync(base_url=url) as sdk:
        assert sdk.recall(q="staging database cluster").results == []
    live = _rows(hippo, "SELECT count(*) FROM memories WHERE kind = 'raw'")
    assert live == [(1,)]  # only the private message is left


def test_slack_deliveries_that_cannot_be_read_become_dead_letters(hippo: Hippo) -> None:
    url = serve(hippo, SLACK_SIGNING_SECRET=SLACK)
    with httpx.Client(base_url=url) as client:
        bad_json = b'{"type": "event_callback", '
        answer = client.post(SLACK_PATH, content=bad_json, headers=slack_headers(SLACK, bad_json))
        assert answer.status_code == 200 and answer.json()["status"] == "dlq"
        no_envelope = _post_slack(client, {"type": "event_callback", "event": {"type": "message"}})
        assert no_envelope.json()["status"] == "dlq"
    listed = hippo.json("slack", "dlq", "list")["letters"]
    assert [(d["bucket"], d["error"]) for d in listed] == [
        ("parse_error", "invalid JSON"),
        ("parse_error", "an event_callback needs team_id, event_id and event"),
    ]
    assert "invalid JSON" in hippo.ok("slack", "dlq", "list").stdout


def test_a_team_mapped_to_a_tenant_writes_there_and_an_unknown_one_is_refused(hippo: Hippo) -> None:
    hippo.start()
    hippo.stop()  # the store now exists; the mapping is the operator's row
    with sqlite3.connect(hippo.db) as conn:
        conn.execute("INSERT INTO slack_workspaces VALUES ('T0TEAM001', 'acme', '2026-01-01T00:00:00Z')")
    url = serve(hippo, SLACK_SIGNING_SECRET=SLACK)
    with httpx.Client(base_url=url) as client:
        mapped = _post_slack(client, _slack_message("Ev200", "Acme's channel message lands in acme"))
        assert mapped.json()["status"] == "ingested"
        other = _slack_message("Ev201", "A message from an unknown workspace")
        other["team_id"] = "T0STRANGER"
        assert _post_slack(client, other).json()["status"] == "dlq"
    assert _rows(hippo, "SELECT tenant_id FROM memories") == [("acme",)]
    assert _rows(hippo, "SELECT tenant_id, bucket FROM dead_letters") == [("__unroutable__", "unroutable")]


def _issue(action: str, number: int, title: str, body_text: str, *, private: bool = False) -> dict[str, Any]:
    """An `issues` delivery (docs.github.com, webhook events and payloads)."""
    return {
        "action": action,
        "issue": {
            "id": 1000 + number,
            "number": number,
            "title": title,
            "body": body_text,
            "user": {"login": "octocat", "id": 1},
            "updated_at": "2026-11-30T10:00:00Z",
        },
        "repository": {"id": 42, "name": "api", "full_name": "acme/api", "private": private},
        "sender": {"login": "octocat", "id": 1},
    }


def _comment(action: str, comment_id: int, text: str) -> dict[str, Any]:
    return {
        "action": action,
        "issue": {"number": 7, "title": "Flaky login test", "user": {"login": "octocat", "id": 1}},
        "comment": {"id": comment_id, "body": text, "user": {"login": "hubot", "id": 2}},
        "repository": {"full_name": "acme/api", "private": False},
        "sender": {"login": "hubot", "id": 2},
    }


def _post_github(
    client: httpx.Client, event: str, payload: dict[str, Any], delivery: str | None = None
) -> httpx.Response:
    raw = body(payload)
    return client.post(
        GITHUB_PATH, content=raw, headers=github_headers(GITHUB, raw, event, delivery or str(uuid.uuid4()))
    )


def test_github_issues_comments_reviews_once_with_edits_and_deletions(hippo: Hippo) -> None:
    url = serve(hippo, GITHUB_WEBHOOK_SECRET=GITHUB)
    delivery = str(uuid.uuid4())
    with httpx.Client(base_url=url) as client:
        opened = _post_github(
            client, "issues", _issue("opened", 7, "Flaky login test", "Fails when Redis restarts"), delivery
        )
        assert opened.json()["status"] == "ingested"
        redelivered = _post_github(
            client, "issues", _issue("opened", 7, "Flaky login test", "Fails when Redis restarts"), delivery
        )
        assert redelivered.json()["status"] == "duplicate"
        assert (
            _post_github(client, "issues", _issue("labeled", 7, "Flaky login test", "x")).json()["status"]
            == "skipped"
        )
        edited = _post_github(
            client, "issues", _issue("edited", 7, "Flaky login test", "Fails when Redis restarts mid-login")
        )
        assert edited.json()["status"] == "ingested" and edited.json()["archivedCount"] == 1
        comment = _post_github(
            client, "issue_comment", _comment("created", 555, "Pinning Redis fixed it for me")
        )
        assert comment.json()["status"] == "ingested"
        review = {
            "action": "submitted",
            "review": {
                "id": 88,
                "body": "Needs a test for the retry path",
                "user": {"login": "ana", "id": 3},
                "state": "commented",
            },
            "pull_request": {"number": 12, "title": "Retry logins", "user": {"login": "octocat", "id": 1}},
            "repository": {"full_name": "acme/api", "private": False},
            "sender": {"login": "ana", "id": 3},
        }
        assert _post_github(client, "pull_request_review", review).json()["status"] == "ingested"
        secret = _post_github(
            client,
            "issues",
            _issue("opened", 9, "Rotate the signing key", "The old one leaked", private=True),
        )
        assert secret.json()["status"] == "ingested"
        gone = _post_github(
            client, "issue_comment", _comment("deleted", 555, "Pinning Redis fixed it for me")
        )
        assert gone.json()["status"] == "archived"
        pushed = _post_github(
            client, "push", {"ref": "refs/heads/main", "repository": {"full_name": "acme/api"}}
        )
        assert pushed.json()["status"] == "skipped"
        shapeless = _post_github(
            client, "issues", {"action": "opened", "repository": {"full_name": "acme/api"}}
        )
        assert shapeless.json()["status"] == "dlq"
    refs = _rows(
        hippo, "SELECT artifact_ref, owner, scope FROM memories WHERE kind = 'raw' ORDER BY artifact_ref"
    )
    assert refs == [
        ("gh://acme/api/issues/7", "user:gh:octocat", "github:public:acme/api"),
        ("gh://acme/api/issues/9", "user:gh:octocat", "github:private:acme/api"),
        ("gh://acme/api/pull/12#review-88", "user:gh:ana", "github:public:acme/api"),
    ]
    with HippoSync(base_url=url) as sdk:
        assert [r.content for r in sdk.recall(q="flaky login redis").results] == [
            "Flaky login test\n\nFails when Redis restarts mid-login"
        ]
        assert sdk.recall(q="rotate signing key leaked").results == []
    letters = hippo.json("github", "dlq", "list")["letters"]
    assert [d["bucket"] for d in letters] == ["parse_error"]


class _SlackApi(BaseHTTPRequestHandler):
    """Slack's Web API, stubbed: the one paid network service the backfill calls."""

    pages: ClassVar[dict[str, dict[str, Any]]] = {}
    calls: ClassVar[list[tuple[str, dict[str, list[str]], str]]] = []

    def do_GET(self) -> None:
        parsed = urlparse(self.path)
        query = parse_qs(parsed.query)
        self.calls.append((parsed.path, query, self.headers.get("Authorization", "")))
        if parsed.path.endswith("conversations.info"):
            answer: dict[str, Any] = {"ok": True, "channel": {"id": "C0PUBLIC1", "is_private": False}}
        else:
            answer = self.pages[query.get("cursor", [""])[0]]
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


def _history(ts: str, text: str) -> dict[str, Any]:
    """A conversations.history message (its messages carry no channel, but their team)."""
    return {"type": "message", "user": "U0ANA0001", "text": text, "ts": ts, "team": "T0TEAM001"}


def test_slack_backfill_pages_history_once_beside_the_webhook(hippo: Hippo) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlackApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _SlackApi.calls = []
    _SlackApi.pages = {
        "": {
            "ok": True,
            "messages": [
                _history("1700000300.000001", "Backfilled note about the billing cron"),
                _history("1700000000.000100", "The staging database moved to the new cluster"),
            ],
            "has_more": True,
            "response_metadata": {"next_cursor": "page2"},
        },
        "page2": {
            "ok": True,
            "messages": [_history("1699999000.000001", "The oldest note: use make release")],
            "response_metadata": {"next_cursor": ""},
        },
    }
    try:
        url = serve(
            hippo, SLACK_SIGNING_SECRET=SLACK, SLACK_API_URL=f"http://127.0.0.1:{server.server_address[1]}"
        )
        with httpx.Client(base_url=url) as client:
            live = _post_slack(
                client, _slack_message("Ev300", "The staging database moved to the new cluster")
            )
            assert live.json()["status"] == "ingested"
        hippo.env["SLACK_BOT_TOKEN"] = "xoxb-test-token"
        done = hippo.json("slack", "backfill", "--channel", "C0PUBLIC1")
        assert (done["pages"], done["ingested"], done["duplicates"]) == (2, 2, 1)
        assert done["latest_ts"] == "1700000300.000001"
        assert all(auth == "Bearer xoxb-test-token" for _, _, auth in _SlackApi.calls)
        again = hippo.json("slack", "backfill", "--channel", "C0PUBLIC1")
        history = [q for path, q, _ in _SlackApi.calls if path.endswith("conversations.history")]
        # The second run starts after the newest message the first one saw.
        assert "oldest" not in history[0] and history[2]["oldest"] == ["1700000300.000001"]
        assert again["ingested"] == 0
    finally:
        server.shutdown()
    contents = sorted(c for (c,) in _rows(hippo, "SELECT content FROM memories WHERE kind = 'raw'"))
    assert contents == [
        "Backfilled note about the billing cron",
        "The oldest note: use make release",
        "The staging database moved to the new cluster",
    ]
    assert _rows(hippo, "SELECT latest_ts FROM slack_cursors") == [("1700000300.000001",)]
    hippo.env.pop("SLACK_BOT_TOKEN")
    refused = hippo.ctl("slack", "backfill", "--channel", "C0PUBLIC1")
    assert refused.returncode == 1 and "SLACK_BOT_TOKEN" in refused.stderr
