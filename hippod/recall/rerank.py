"""`recall --reranker`: the top of the ranked list reordered by a provider's rerank API (Cohere's or
Voyage's) before the budget fill. Off unless the request or the store's `reranker.default` names
one; only the `recall` verb asks, never a hook.

`local` (an offline cross-encoder) is refused with the reason: no package on PyPI ships a
cross-encoder's weights, and hippod downloads none at run time (bench/RESULTS.md, Rerankers)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.recall.score import Scored
from hippod.remote import rerank as api
from hippod.remote.http import Caller, Policy

# Results reordered by default (the store's reranker.topN).
TOP_N = 20
# A rerank is one call for the user's recall: a short wait, one retry, then the blend's order.
POLICY = Policy(timeout_s=10.0, retries=1, backoff_s=0.25, max_wait_s=5.0)
UNAVAILABLE = "reranker_unavailable"
LOCAL_MISSING = (
    "--reranker local is not available: no package on PyPI ships a cross-encoder's weights "
    "(flashrank and the others download theirs at first use, which hippod never does)"
)


def chosen(body: m.Recall, config: dict[str, Any], *, use_default: bool) -> tuple[str, str] | None:
    """(provider, model) of the reranker this recall uses, or None for none: the request's
    `--reranker`, else (with `use_default`) the store's `reranker.default`."""
    section = config.get("reranker") if isinstance(config.get("reranker"), dict) else {}
    assert isinstance(section, dict)
    spec = body.reranker
    if spec is None:
        if not use_default:
            return None
        spec = section.get("default", "off")
        if not isinstance(spec, str) or validate.reranker_problem(spec) is not None:
            raise HippoError(
                "bad_config",
                f"reranker.default {spec!r} in config.json: use off, local, cohere[:model] or voyage[:model]",
            )
    elif problem := validate.reranker_problem(spec):
        raise HippoError("usage", problem)
    if spec == "off":
        return None
    if spec == "local":
        raise HippoError(UNAVAILABLE, LOCAL_MISSING, hint="use --reranker cohere or --reranker voyage")
    provider, _, model = spec.partition(":")
    return provider, model or api.DEFAULT_MODELS[provider]


def top_n(config: dict[str, Any]) -> int:
    """How many of the ranked results are reordered: the store's reranker.topN, else TOP_N."""
    section = config.get("reranker")
    value = section.get("topN") if isinstance(section, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else TOP_N


async def reorder(
    ctx: RequestContext, query: str, ranked: list[Scored], reranker: tuple[str, str], count: int
) -> list[Scored]:
    """The first `count` results in the API's order of relevance (ties keep their order), the rest
    after them. A call that fails leaves the order as it was and says so; a missing key is an error."""
    head = ranked[:count]
    if len(head) < 2:
        return ranked
    name, model = reranker
    provider = api.PROVIDERS[name]
    key = provider.require_key(purpose=f"--reranker {name}")
    try:
        async with Caller(provider, key, POLICY) as caller:
            scores = await api.scores(caller, model, query, [s.memory.content for s in head])
    except HippoError as exc:
        line = f"(not reranked: {exc.message})"
        if line not in ctx.warnings:
            ctx.warnings.append(line)
        return ranked
    order = sorted(range(len(head)), key=lambda i: -scores[i])
    return [head[i] for i in order] + ranked[count:]
