"""Edits at the source, live and replayed from the dead letters (integrations.md §10), against a real
daemon receiving signed deliveries: an edit older than (or as old as) the one applied is `stale` and
changes nothing, whatever order Slack or GitHub deliver in, and an edit of an item archived here does
not bring it back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from e2e.http_support import serve
from e2e.test_dlq_replay import _live, _map_slack, _open, _replay, _sql
from e2e.test_webhooks import GITHUB, SLACK, _comment, _issue, _post_github, _post_slack, _slack_message

if TYPE_CHECKING:
    from e2e.harness import Hippo

POSTED = "1700000000.000100"
SLACK_REF = f"slack://%/{POSTED}"


def _edit(event_id: str, text: str, edited: str | None, *, event_ts: str) -> dict[str, Any]:
    """A `message_changed` event (api.slack.com/events/message/message_changed): the message as it is
    now, with `edited.ts` when Slack says when it was edited, and the event's own ts."""
    message: dict[str, Any] = {"type": "message", "user": "U0ANA0001", "text": text, "ts": POSTED}
    if edited is not None:
        message["edited"] = {"user": "U0ANA0001", "ts": edited}
    return _slack_message(
        event_id,
        "",
        subtype="message_changed",
        hidden=True,
        message=message,
        previous_message={"type": "message", "user": "U0ANA0001", "text": "earlier", "ts": POSTED},
        ts=event_ts,
        event_ts=event_ts,
    )


def _issue_edit(title: str, body_text: str, updated_at: str) -> dict[str, Any]:
    payload = _issue("edited", 31, title, body_text)
    payload["issue"]["updated_at"] = updated_at
    payload["changes"] = {"body": {"from": "an earlier body"}}
    return payload


def _texts(hippo: Hippo, ref_like: str) -> list[str]:
    return sorted(str(content) for _, content in _live(hippo, ref_like))


def test_a_replayed_slack_edit_older_than_the_one_applied_is_stale(hippo: Hippo) -> None:
    url = _open(hippo)
    with httpx.Client(base_url=url) as client:
        posted = _slack_message("EvEd1", "The deploy window is Monday 9am", ts=POSTED)
        v1 = _edit(
            "EvEd2", "The deploy window is Tuesday 9am", "1700000100.000000", event_ts="1700000100.000200"
        )
        assert _post_slack(client, posted).json()["status"] == "dlq"
        assert _post_slack(client, v1).json()["status"] == "dlq"
        _map_slack(hippo)
        v2 = _edit(
            "EvEd3", "The deploy window is Wednesday 9am", "1700000200.000000", event_ts="1700000200.000200"
        )
        assert _post_slack(client, v2).json()["status"] == "ingested"
    dry = _replay(hippo, "slack", "--dry-run")
    assert [d["status"] for d in dry["letters"]][1] == "would_stale"
    done = _replay(hippo, "slack")
    assert [d["status"] for d in done["letters"]] == ["duplicate", "stale"]
    [(kept_id, text)] = _live(hippo, SLACK_REF)
    assert text == "The deploy window is Wednesday 9am"
    assert done["letters"][1]["memory_id"] == kept_id
    # The stale letter is done: nothing is left to apply, and a second replay finds nothing.
    assert _sql(hippo, "SELECT replay_status FROM dead_letters ORDER BY id") == [("duplicate",), ("stale",)]
    assert hippo.json("slack", "dlq", "list")["letters"] == []
    assert _sql(hippo, "SELECT count(*) FROM memories WHERE content LIKE '%Tuesday%'") == [(0,)]


def test_a_replayed_github_edit_older_than_the_one_applied_is_stale(hippo: Hippo) -> None:
    url = _open(hippo)
    opened = _issue("opened", 31, "Cache warmup", "Warm the cache before deploys")
    v1 = _issue_edit("Cache warmup", "Warm the cache after deploys", "2026-11-30T11:00:00Z")
    for payload in (opened, v1):
        payload["installation"] = {"id": 42}
    with httpx.Client(base_url=url) as client:
        assert _post_github(client, "issues", opened).json()["status"] == "dlq"
        assert _post_github(client, "issues", v1).json()["status"] == "dlq"
        _sql(hippo, "INSERT INTO github_installations VALUES ('42', 'default', '2026-01-02T00:00:00Z')")
        v2 = _issue_edit("Cache warmup", "Warm the cache during deploys", "2026-11-30T12:00:00+00:00")
        v2["installation"] = {"id": 42}
        assert _post_github(client, "issues", v2).json()["status"] == "ingested"
    done = _replay(hippo, "github")
    assert [d["status"] for d in done["letters"]] == ["duplicate", "stale"]
    assert _texts(hippo, "gh://%/issues/31") == ["Cache warmup\n\nWarm the cache during deploys"]
    assert hippo.json("github", "dlq", "list")["letters"] == []


def test_slack_edits_delivered_out_of_order_keep_the_newest(hippo: Hippo) -> None:
    url = serve(hippo, SLACK_SIGNING_SECRET=SLACK)
    with httpx.Client(base_url=url) as client:
        posted = _slack_message("EvOo1", "Backups run at 1am", ts=POSTED)
        assert _post_slack(client, posted).json()["status"] == "ingested"
        newer = _edit("EvOo3", "Backups run at 3am", "1700000300.000000", event_ts="1700000300.000100")
        older = _edit("EvOo2", "Backups run at 2am", "1700000200.000000", event_ts="1700000200.000100")
        same = _edit("EvOo4", "Backups run at 4am", "1700000300.000000", event_ts="1700000300.000900")
        assert _post_slack(client, newer).json()["status"] == "ingested"
        assert _post_slack(client, older).json()["status"] == "stale"
        assert _post_slack(client, same).json()["status"] == "stale"  # as old as the one applied
        assert _texts(hippo, SLACK_REF) == ["Backups run at 3am"]
        # An emptying edit made before the newest text does not empty it either.
        emptied = _edit("EvOo5", "", "1700000250.000000", event_ts="1700000250.000100")
        assert _post_slack(client, emptied).json()["status"] == "stale"
        # Without edited.ts, the event's own ts orders the edit.
        latest = _edit("EvOo6", "Backups run at 5am", None, event_ts="1700000400.000100")
        assert _post_slack(client, latest).json()["status"] == "ingested"
        late = _edit("EvOo7", "Backups run at 6am", None, event_ts="1700000350.000100")
        assert _post_slack(client, late).json()["status"] == "stale"
    assert _texts(hippo, SLACK_REF) == ["Backups run at 5am"]
    assert _sql(
        hippo, "SELECT count(*) FROM memories WHERE content LIKE '%2am%' OR content LIKE '%6am%'"
    ) == [(0,)]


def test_github_edits_delivered_out_of_order_keep_the_newest(hippo: Hippo) -> None:
    url = serve(hippo, GITHUB_WEBHOOK_SECRET=GITHUB)

    def comment_edit(text: str, updated_at: str) -> dict[str, Any]:
        payload = _comment("edited", 777, text)
        payload["comment"]["updated_at"] = updated_at
        return payload

    with httpx.Client(base_url=url) as client:
        assert (
            _post_github(client, "issue_comment", _comment("created", 777, "Retry twice")).json()["status"]
            == "ingested"
        )
        newer = comment_edit("Retry three times", "2026-12-01T10:05:00Z")
        older = comment_edit("Retry four times", "2026-12-01T10:01:00Z")
        assert _post_github(client, "issue_comment", newer).json()["status"] == "ingested"
        assert _post_github(client, "issue_comment", older).json()["status"] == "stale"
        assert _texts(hippo, "gh://%#comment-777") == ["Retry three times"]
        newest = comment_edit("Retry five times", "2026-12-01T10:09:00Z")
        assert _post_github(client, "issue_comment", newest).json()["status"] == "ingested"
    assert _texts(hippo, "gh://%#comment-777") == ["Retry five times"]


def test_an_edit_does_not_bring_back_an_item_archived_here(hippo: Hippo) -> None:
    url = _open(hippo)
    _map_slack(hippo)
    with httpx.Client(base_url=url) as client:
        posted = _post_slack(client, _slack_message("EvAr1", "The VPN password is on the wiki", ts=POSTED))
        memory_id = posted.json()["memoryId"]
        hippo.ok("forget", memory_id, "--archive", "--reason", "points at a secret")
        live = _edit(
            "EvAr2", "The VPN password is in the vault", "1700000100.000000", event_ts="1700000100.1"
        )
        assert _post_slack(client, live).json()["status"] == "deleted"
        assert _live(hippo, SLACK_REF) == []
        # Replayed: an edit that waited in the dead letters does not bring it back either.
        _sql(hippo, "DELETE FROM slack_workspaces WHERE team_id = 'T0TEAM001'")
        waiting = _edit(
            "EvAr3", "The VPN password is in 1Password", "1700000200.000000", event_ts="1700000200.1"
        )
        assert _post_slack(client, waiting).json()["status"] == "dlq"
        _map_slack(hippo)
        done = _replay(hippo, "slack")
        assert [d["status"] for d in done["letters"]] == ["deleted"]
        assert _live(hippo, SLACK_REF) == []
        assert _sql(hippo, "SELECT count(*) FROM memories WHERE content LIKE '%VPN%'") == [(0,)]
        # GitHub: an issue archived here stays archived when it is edited.
        opened = _issue("opened", 32, "Rotate keys", "Old key in the repo")
        opened["installation"] = {"id": 7}
        issue_id = _post_github(client, "issues", opened).json()["memoryId"]
        hippo.ok("forget", issue_id, "--archive", "--reason", "names a key")
        edited = _issue_edit("Rotate keys", "Old key still in the repo", "2026-12-01T10:00:00Z")
        edited["issue"]["number"] = 32
        edited["installation"] = {"id": 7}
        assert _post_github(client, "issues", edited).json()["status"] == "deleted"
        assert _live(hippo, "gh://%/issues/32") == []
        # Emptied at the source (not archived here): a later edit with text stores it again.
        other = _slack_message("EvAr4", "Lunch is at noon", ts="1700000500.000100")
        assert _post_slack(client, other).json()["status"] == "ingested"
        emptied = _edit("EvAr5", "", "1700000600.000000", event_ts="1700000600.1")
        refill = _edit("EvAr6", "Lunch is at one", "1700000700.000000", event_ts="1700000700.1")
        for payload in (emptied, refill):
            payload["event"]["message"]["ts"] = "1700000500.000100"
        assert _post_slack(client, emptied).json()["status"] == "archived"
        assert _post_slack(client, refill).json()["status"] == "ingested"
    assert _texts(hippo, "slack://%/1700000500.000100") == ["Lunch is at one"]
