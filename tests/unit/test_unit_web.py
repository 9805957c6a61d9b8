"""The HTTP side's pure parts: API keys and their hashes, webhook signatures, the token bucket, the
Slack and GitHub plans, and the OpenAPI document (integrations.md §9, §10)."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from hippod.base import keys
from hippod.connectors import github, signatures, slack
from hippod.connectors.plans import Ingest, Malformed, Remove, Skip
from hippod.web.auth import is_loopback
from hippod.web.guard import TokenBuckets


def test_keys_have_the_original_format_and_verify_only_their_own_secret() -> None:
    key_id, plaintext = keys.new_key()
    assert re.fullmatch(r"hk_[a-z2-7]{24}\.[a-z2-7]{32}", plaintext) and plaintext.startswith(key_id + ".")
    stored = keys.hash_key(plaintext)
    scheme, salt, digest = stored.split("$")
    assert scheme == "scrypt" and len(bytes.fromhex(salt)) == 16 and len(bytes.fromhex(digest)) == 32
    assert keys.verify(plaintext, stored)
    assert not keys.verify(plaintext[:-1] + ("a" if plaintext[-1] != "a" else "b"), stored)
    assert not keys.verify(plaintext, "bcrypt$00$00") and not keys.verify(plaintext, "garbage")
    assert keys.hash_key(plaintext) != stored  # a fresh salt each time
    # The stored hash is scrypt(N=16384, r=8, p=1, 32 bytes) of the whole plaintext.
    expected = hashlib.scrypt(plaintext.encode(), salt=bytes.fromhex(salt), n=16384, r=8, p=1, dklen=32)
    assert expected.hex() == digest


def test_key_ids_are_read_from_tokens_and_malformed_ones_refused() -> None:
    key_id, plaintext = keys.new_key()
    assert keys.key_id_of(plaintext) == key_id
    for bad in ("", "hk_short.secret", key_id, key_id + ".", "HK_" + key_id[3:] + ".x", "x" + plaintext):
        assert keys.key_id_of(bad) is None, bad
    assert keys.verify("anything", keys.dummy_hash()) is False


def _slack_sign(secret: str, stamp: str, body: bytes) -> str:
    return (
        "v0=" + hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    )


def test_slack_signatures_cover_the_timestamp_and_the_exact_body() -> None:
    body, now = b'{"type":"event_callback"}', 1_700_000_000.0
    good = _slack_sign("s3cret", "1700000000", body)
    assert signatures.slack_valid(["s3cret"], "1700000000", good, body, now)
    assert signatures.slack_valid(["new", "s3cret"], "1700000000", good, body, now)  # rotation
    assert not signatures.slack_valid(["s3cret"], "1700000000", good, body + b" ", now)
    assert not signatures.slack_valid(["other"], "1700000000", good, body, now)
    assert not signatures.slack_valid(["s3cret"], "1700000000", good, body, now + 301)  # a replay
    assert signatures.slack_valid(["s3cret"], "1700000000", good, body, now + 300)
    assert not signatures.slack_valid(["s3cret"], None, good, body, now)
    assert not signatures.slack_valid(["s3cret"], "17e8", good, body, now)
    assert not signatures.slack_valid(["s3cret"], "1700000000", good[3:], body, now)
    assert not signatures.slack_valid([""], "1700000000", _slack_sign("", "1700000000", body), body, now)


def test_github_signatures() -> None:
    body = b'{"action":"opened"}'
    good = "sha256=" + hmac.new(b"gh", body, hashlib.sha256).hexdigest()
    assert signatures.github_valid(["gh"], good, body)
    assert not signatures.github_valid(["gh"], good, body + b"\n")
    assert not signatures.github_valid(["gh"], good.replace("sha256=", "sha1="), body)
    assert not signatures.github_valid(["gh"], None, body)


def test_the_token_bucket_allows_a_burst_of_twice_the_rate_then_the_rate() -> None:
    bucket = TokenBuckets(20)
    assert sum(bucket.take("a", 0.0) for _ in range(60)) == 40
    assert bucket.take("b", 0.0)  # per address
    assert not bucket.take("a", 0.0)
    assert sum(bucket.take("a", 0.5) for _ in range(20)) == 10  # 20 a second
    assert sum(bucket.take("a", 100.0) for _ in range(60)) == 40  # refilled up to the burst only


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("::ffff:127.0.0.1", True),
     ("192.0.2.2", False), ("::ffff:192.0.2.2", False), ("localhost", False), (None, False), ("", False)],
)  # fmt: skip
def test_loopback_peers(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _callback(event: dict[str, object]) -> slack.Envelope:
    return slack.envelope({"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event})


def test_slack_plans() -> None:
    message = {
        "type": "message",
        "channel": "C1",
        "channel_type": "channel",
        "user": "U1",
        "text": " hi there ",
        "ts": "1.2",
    }
    plan = slack.plan(_callback(message))
    assert isinstance(plan, Ingest) and not plan.edit
    receipt = plan.receipt
    assert (receipt.content, receipt.scope, receipt.owner) == ("hi there", "slack:public:C1", "user:U1")
    assert receipt.artifact_ref == "slack://T1/C1/1.2"
    assert receipt.tags == ["source:slack", "channel:C1", "user:U1"]
    private = slack.plan(_callback({**message, "channel_type": "im"}))
    assert isinstance(private, Ingest) and private.receipt.scope == "slack:private:C1"
    unknown = slack.plan(_callback({k: v for k, v in message.items() if k != "channel_type"}))
    assert isinstance(unknown, Ingest) and unknown.receipt.scope == "slack:private:C1"  # fails closed
    assert isinstance(slack.plan(_callback({**message, "subtype": "bot_message"})), Skip)
    assert isinstance(slack.plan(_callback({**message, "user": None, "bot_id": "B1"})), Skip)
    assert isinstance(slack.plan(_callback({**message, "subtype": "channel_join"})), Skip)
    assert isinstance(slack.plan(_callback({**message, "text": "  "})), Skip)
    assert isinstance(slack.plan(_callback({"type": "reaction_added"})), Skip)
    deleted = slack.plan(_callback({**message, "subtype": "message_deleted", "deleted_ts": "1.2"}))
    assert isinstance(deleted, Remove) and deleted.artifact_ref == "slack://T1/C1/1.2"
    changed = slack.plan(
        _callback(
            {**message, "subtype": "message_changed", "message": {"user": "U1", "text": "new", "ts": "1.2"}}
        )
    )
    assert (
        isinstance(changed, Ingest) and changed.edit and changed.receipt.artifact_ref == "slack://T1/C1/1.2"
    )
    for broken in ({"type": "message", "user": "U1", "ts": "1"}, {**message, "ts": 5}):
        with pytest.raises(Malformed):
            slack.plan(_callback(broken))
    for envelope in (None, [], {"type": "event_callback"}, {"type": "block_actions"}):
        with pytest.raises(Malformed):
            slack.envelope(envelope)


def _issue(action: str, **extra: object) -> dict[str, object]:
    issue = {"number": 3, "title": "Crash", "body": "on start", "user": {"login": "ana"}}
    return {
        "action": action,
        "issue": {**issue, **extra},
        "repository": {"full_name": "o/r", "private": False},
    }


def test_github_plans() -> None:
    opened = github.plan("issues", _issue("opened"), "d1")
    assert isinstance(opened, Ingest) and not opened.edit
    assert (opened.receipt.content, opened.receipt.artifact_ref) == ("Crash\n\non start", "gh://o/r/issues/3")
    assert opened.receipt.owner == "user:gh:ana" and opened.receipt.scope == "github:public:o/r"
    assert "event:issues.opened" in opened.receipt.tags
    edited = github.plan("issues", _issue("edited"), "d2")
    assert isinstance(edited, Ingest) and edited.edit
    assert isinstance(github.plan("issues", _issue("labeled"), "d3"), Skip)
    assert isinstance(github.plan("issues", _issue("deleted"), "d4"), Remove)
    assert isinstance(github.plan("star", {"action": "created"}, "d5"), Skip)
    comment = {
        "action": "created",
        "issue": {"number": 3, "pull_request": {}},
        "comment": {"id": 9, "body": "LGTM", "user": {"login": "bo"}},
        "repository": {"full_name": "o/r"},
    }
    on_pull = github.plan("issue_comment", comment, "d6")
    assert isinstance(on_pull, Ingest) and on_pull.receipt.artifact_ref == "gh://o/r/pull/3#comment-9"
    assert on_pull.receipt.scope == "github:private:o/r"  # privacy not stated: private
    with pytest.raises(Malformed):
        github.plan("issues", {"action": "opened", "repository": {"full_name": "o/r"}}, "d7")
    with pytest.raises(Malformed):
        github.plan(
            "issues", {"action": "opened", "issue": {"number": "3"}, "repository": {"full_name": "o/r"}}, "d8"
        )
    assert github.installation({"installation": {"id": 7}}) == "7"
    assert github.installation({"installation": {"id": True}}) is None


def test_the_openapi_document_names_every_route_and_its_shapes() -> None:
    from hippod.web import app, openapi

    document = openapi.document(app.OPS, app.UNSUPPORTED)
    operations = {(method, path) for path, ops in document["paths"].items() for method in ops}
    for op in app.OPS:
        assert (op.method.lower(), re.sub(r"\{(\w+):int\}", r"{\1}", op.path)) in operations
    remember = document["paths"]["/v1/memories"]["post"]
    schema = remember["requestBody"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/RememberIn"} and remember["requestBody"]["required"]
    props = document["components"]["schemas"]["RememberIn"]["properties"]
    assert "artifactRef" in props and "artifact_ref" not in props  # the SDK's camelCase
    assert document["paths"]["/health"]["get"]["security"] == []
