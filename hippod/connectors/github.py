"""GitHub webhook deliveries as plans (integrations.md §10): issues, pull requests, their comments
and reviews become raw memories; edits replace them, deletions archive them."""

from __future__ import annotations

from typing import Any

from hippod.connectors.plans import (
    Ingest,
    Malformed,
    Plan,
    Receipt,
    Remove,
    Skip,
    iso_time,
    tags,
    text_of,
)

# event -> the actions that carry new text; `deleted` archives; any other action is skipped.
TEXT_ACTIONS = {
    "issues": ("opened", "edited", "reopened"),
    "issue_comment": ("created", "edited"),
    "pull_request": ("opened", "edited", "reopened"),
    "pull_request_review": ("submitted", "edited"),
    "pull_request_review_comment": ("created", "edited"),
}
DELETABLE = frozenset({"issues", "issue_comment", "pull_request_review_comment"})


def _object(payload: dict[str, Any], name: str, event: str) -> dict[str, Any]:
    value = payload.get(name)
    if not isinstance(value, dict):
        raise Malformed("parse_error", f"body shape did not match X-GitHub-Event={event}: no {name}")
    return value


def _number(item: dict[str, Any], event: str) -> int:
    number = item.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise Malformed("parse_error", f"body shape did not match X-GitHub-Event={event}: no number")
    return number


def _id(item: dict[str, Any], event: str) -> int:
    value = item.get("id")
    if not isinstance(value, int) or isinstance(value, bool):
        raise Malformed("parse_error", f"body shape did not match X-GitHub-Event={event}: no id")
    return value


def _login(item: dict[str, Any], payload: dict[str, Any]) -> str:
    for holder in (item.get("user"), payload.get("sender")):
        if isinstance(holder, dict) and isinstance(holder.get("login"), str) and holder["login"]:
            return str(holder["login"])
    return "unknown"


def repository(payload: object) -> tuple[str, bool]:
    """(owner/repo, private): a repository whose privacy is not stated counts as private."""
    if not isinstance(payload, dict):
        raise Malformed("parse_error", "not a GitHub webhook envelope")
    repo = payload.get("repository")
    if (
        not isinstance(repo, dict)
        or not isinstance(repo.get("full_name"), str)
        or "/" not in repo["full_name"]
    ):
        raise Malformed("parse_error", "not a GitHub webhook envelope: no repository.full_name")
    return repo["full_name"], repo.get("private") is not False


def installation(payload: object) -> str | None:
    if isinstance(payload, dict) and isinstance(payload.get("installation"), dict):
        value = payload["installation"].get("id")
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def plan(event: str, payload: dict[str, Any], delivery: str) -> Plan:
    """What one delivery asks of the store."""
    if event not in TEXT_ACTIONS:
        return Skip(f"event {event} is not ingested")
    action = payload.get("action")
    if not isinstance(action, str):
        raise Malformed("parse_error", f"body shape did not match X-GitHub-Event={event}: no action")
    full_name, private = repository(payload)
    base = f"gh://{full_name}"
    if event in ("issues", "issue_comment"):
        issue = _object(payload, "issue", event)
        n = _number(issue, event)
        # GitHub sends a pull request's conversation comments as issue_comment.
        thread = f"{base}/pull/{n}" if isinstance(issue.get("pull_request"), dict) else f"{base}/issues/{n}"
    else:
        pull = _object(payload, "pull_request", event)
        thread = f"{base}/pull/{_number(pull, event)}"
    if event == "issues":
        item, artifact, text = issue, thread, text_of(issue.get("title"), issue.get("body"))
    elif event == "pull_request":
        item, artifact, text = pull, thread, text_of(pull.get("title"), pull.get("body"))
    elif event == "pull_request_review":
        item = _object(payload, "review", event)
        artifact, text = f"{thread}#review-{_id(item, event)}", text_of(item.get("body"))
    else:
        item = _object(payload, "comment", event)
        artifact, text = f"{thread}#comment-{_id(item, event)}", text_of(item.get("body"))
    if action == "deleted" and event in DELETABLE:
        return Remove(artifact, f"deleted on GitHub ({delivery})")
    if action not in TEXT_ACTIONS[event]:
        return Skip(f"{event}.{action} carries no new text")
    if not text:
        return Skip(f"{event}.{action} without text")
    login = _login(item, payload)
    receipt = Receipt(
        content=text,
        scope=f"github:{'private' if private else 'public'}:{full_name}",
        owner=f"user:gh:{login}",
        artifact_ref=artifact,
        tags=tags("source:github", f"repo:{full_name}", f"event:{event}.{action}", f"user:gh:{login}"),
    )
    if action != "edited":
        return Ingest(receipt)
    # The edited item's own updated_at orders its edits (a review that has none is not ordered).
    return Ingest(receipt, edit=True, edited=iso_time(item.get("updated_at")))
