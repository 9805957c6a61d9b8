"""The Network check: what this hippod sends off the machine, and when, as the installed code does it.

Two modules open outbound connections: teamlink/calls.py (the team server, which gets memory text)
and connectors/slack_api.py (`slack backfill`, which reads from Slack). A test keeps that list in step
with the code, so a new sender cannot ship without this check naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hippoctl.protocol.replies_doctor import OK, Check
from hippod.connectors.slack_api import api_url
from hippod.doctor import hippoctl
from hippod.doctor.settings import StoreConfig
from hippod.embed.service import settings
from hippod.remote.embed_apis import APIS
from hippod.remote.rerank import PROVIDERS as RERANK_APIS
from hippod.store.config import STORE_DEFAULTS
from hippod.teamlink import membership
from hippod.teamlink.sender import PULL_SECONDS

NAME = "Network"


def network_check(env: Mapping[str, str], stores: Sequence[StoreConfig], global_root: str) -> Check:
    """Where memory text goes (only to a joined team server), what else calls out, and an unused
    ANTHROPIC_API_KEY named as unused."""
    joined = membership.read(global_root)
    parts = [_team(joined.url, stores) if joined is not None else _no_team()]
    if env.get("ANTHROPIC_API_KEY", "").strip():
        parts.append(
            "ANTHROPIC_API_KEY is set but unused: hippod has no LLM extraction and calls no Anthropic API"
        )
    parts += _embedders_and_rerankers(env, stores)
    parts.append(
        f"{hippoctl('slack', 'backfill')} reads a channel from the Slack Web API at {api_url(env)} when you "
        "run it (it sends no memory text)"
    )
    return Check(NAME, OK, "; ".join(parts))


def _embedders_and_rerankers(env: Mapping[str, str], stores: Sequence[StoreConfig]) -> list[str]:
    """What an API embedder (embeddings.provider) and an API reranker (`recall --reranker`, or a
    store's reranker.default) send, and when."""
    parts = []
    for store in stores:
        wanted = settings(store.values)
        if wanted.remote and wanted.mode != "off":
            api = APIS[wanted.provider].provider
            parts.append(
                f'{store.path} sets embeddings.provider "{wanted.provider}", which sends memory text to '
                f"{api.title}'s embedding API at {api.base_url(env)}: each memory once written and by "
                f"{hippoctl('embed')}, and each recall's query (never a hook's)"
            )
        default = (store.values.get("reranker") or {}).get("default", "off")
        if isinstance(default, str) and default.split(":")[0] in RERANK_APIS:
            api = RERANK_APIS[default.split(":")[0]]
            parts.append(
                f"the top results' text and the query go to {api.title}'s rerank API at {api.base_url(env)} "
                f"on every {hippoctl('recall')} ({store.path} sets reranker.default {default!r})"
            )
    parts.append(
        f"{hippoctl('recall', '--reranker', 'cohere')} (or voyage) sends the query and the top results' "
        "text to that rerank API when you run it"
    )
    return parts


def _no_team() -> str:
    return (
        "no memory text leaves this machine: it goes only to a team server, and this hippod has joined none"
    )


def _team(url: str, stores: Sequence[StoreConfig]) -> str:
    """What goes to the team server: shares, sleep's shares where a project turns them on, marks."""
    sent = f"memory text goes to the team server at {url}: what {hippoctl('share', '--team')} queues"
    if STORE_DEFAULTS.get("autoShareToTeam") is True:
        sent += (
            ", and what sleep shares from every project whose config.json does not turn autoShareToTeam off"
        )
    else:
        sent += ", and what sleep shares from a project whose config.json sets autoShareToTeam"
        here = [s.path for s in stores if s.kind == "project" and s.values.get("autoShareToTeam") is True]
        sent += f" ({here[0]} does)" if here else ""
    return (
        f"{sent}; recalls and outcome marks of the team's memories are reported to it, and its "
        f"memories are copied down every {PULL_SECONDS:.0f} s"
    )
