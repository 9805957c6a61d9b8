"""A new memory as every write verb makes one, and the checks on the text and tags it is made of."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippoctl.protocol import validate
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.model import strength as st
from hippod.model.memory import Memory

if TYPE_CHECKING:
    # For the annotations alone: an import's planning process makes memories from an Origin, and
    # loads neither the request's machinery nor the store registry.
    from hippod.calls.request import RequestContext
    from hippod.store.stores import Store


def usage_check(problem: str | None) -> None:
    """A usage error for the problem a protocol check found, if it found one."""
    if problem is not None:
        raise HippoError("usage", problem)


def validate_content(content: str) -> str:
    """Trim and check a memory's text (the client ran the same checks before connecting)."""
    text = content.strip()
    usage_check(validate.content_problem(text))
    return text


def new_id() -> str:
    """A fresh memory id."""
    return "mem_" + secrets.token_hex(6)


def given_tags(tags: list[str]) -> list[str]:
    """The tags a request gives, cleaned and held to the limits the client also checks."""
    cleaned = validate.clean_tags(tags)
    usage_check(validate.tags_problem(cleaned))
    return cleaned


def fresh_memory(
    ctx: RequestContext,
    store: Store,
    content: str,
    tags: list[str],
    *,
    layer: str = "episodic",
    source: str = "cli",
    confidence: str = "verified",
    pinned: bool = False,
    half_life_days: float | None = None,
    scope: str | None = None,
    owner: str | None = None,
    artifact_ref: str | None = None,
    origin_project: str | None = None,
    kind: str = "distilled",
    default_half_life: float | None = None,
) -> Memory:
    """A new memory as every write verb makes one: created now, full strength, half-life by §8.

    Without `half_life_days` it is the store's default (`default_half_life` when the caller read it
    once for many memories), doubled for an `error` tag.
    """
    if default_half_life is None:  # read even when unused: a config that does not parse is refused
        default_half_life = float(store.config.get("defaultHalfLifeDays", 365))
    if half_life_days is None:
        half_life_days = st.initial_half_life(tags, default_half_life)
    return origin_memory(
        Origin(ctx.tenant, ctx.request.session, store.project),
        content,
        tags,
        half_life_days=half_life_days,
        layer=layer,
        source=source,
        confidence=confidence,
        pinned=pinned,
        scope=scope,
        owner=owner,
        artifact_ref=artifact_ref,
        origin_project=origin_project,
        kind=kind,
    )


@dataclass(frozen=True, slots=True)
class Origin:
    """What a new memory takes from the request and the store that make it: plain values, so work
    in another process (an import's planner) makes memories as the request would."""

    tenant: str
    session: str | None
    project: str


def origin_memory(
    origin: Origin,
    content: str,
    tags: list[str],
    *,
    half_life_days: float,
    layer: str = "episodic",
    source: str = "cli",
    confidence: str = "verified",
    pinned: bool = False,
    scope: str | None = None,
    owner: str | None = None,
    artifact_ref: str | None = None,
    origin_project: str | None = None,
    kind: str = "distilled",
) -> Memory:
    """`fresh_memory` from the values it takes from the request and the store."""
    now = clock.iso(clock.now())
    return Memory(
        id=new_id(),
        tenant_id=origin.tenant,
        content=content,
        layer=layer,
        kind=kind,
        created=now,
        valid_from=now,
        last_retrieved=now,
        retrieval_count=0,
        half_life_days=half_life_days,
        strength=1.0,
        emotional_valence=st.valence_for_tags(tags),
        schema_fit=0.5,
        tags=tags,
        source=source,
        confidence=confidence,
        pinned=pinned,
        outcome_positive=0,
        outcome_negative=0,
        outcome_score=None,
        scope=scope,
        owner=owner,
        artifact_ref=artifact_ref,
        origin_project=origin.project if origin_project is None else origin_project,
        source_session_id=origin.session,
        updated_at=now,
    )
