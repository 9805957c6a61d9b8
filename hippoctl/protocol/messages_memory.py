"""Request bodies of the memory verbs: remember, recall, inspect, forget, outcome, status and embed
(memory-model.md); part of messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body


class Remember(Body):
    on_team = True

    content: str
    tags: list[str] = []
    error: bool = False
    pin: bool = False
    confidence: str | None = None
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    kind: str = "distilled"  # or "raw": an append-only receipt (the HTTP API and the webhooks)
    # Makes a retry safe: one key stores one memory per tenant, however often it is sent (the HTTP
    # API's Idempotency-Key header; a laptop's queue of writes for its team).
    request_key: str | None = None


class Recall(Body):
    on_team = True

    query: str
    budget: int | None = None
    limit: int | None = None
    min_results: int = 1
    why: bool = False
    local_bump: float | None = None
    equal_sources: bool = False
    include_superseded: bool = False
    scope: str | None = None
    # The HTTP API's `mode`: None follows the store's embeddings setting, "bm25" leaves the model
    # out, "hybrid" needs it.
    mode: str | None = None
    # False: rank and record the batch for `outcome`, but leave strength and retrieval counts alone.
    strengthen: bool = True
    # recall.md §11: also the memories up to this many edges of the entity graph away (0 to 3).
    hops: int = 0
    # Memories tagged for this goal rank x1.5, and the goal stack does not lift this recall.
    goal: str | None = None
    # `--reranker`: off, local, cohere[:model] or voyage[:model]; None: the store's reranker.default.
    reranker: str | None = None


class Inspect(Body):
    on_team = True

    id: str


class Forget(Body):
    on_team = True

    id: str
    archive: bool = False
    reason: str | None = None
    # Also remove the global copy a share or promote by hand made (auto-share's copy always goes).
    global_too: bool = False


class Outcome(Body):
    on_team = True

    good: bool
    id: str | None = None
    ids: list[str] | None = None  # several at once (the HTTP API); each must exist, or none is marked


class Status(Body):
    on_team = True


class Embed(Body):
    """`embed [--status]`: embed what lacks a current vector, or only report coverage."""

    status_only: bool = False


class Graph(Body):
    """`graph`: the entity graph's entities and relations (`GET /v1/graph`)."""

    entity: str | None = None  # only the entities of this name and their neighbours
    limit: int = 100


# Every request body of this family, for messages.RequestBody.
BODIES = Remember | Recall | Inspect | Forget | Outcome | Status | Embed | Graph
