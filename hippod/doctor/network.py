"""The Network check: what this hippod sends off the machine, and when, as the installed code does it.

Three modules open outbound connections: teamlink/calls.py (the team server, which gets memory text),
connectors/slack_api.py (`slack backfill`, which reads from Slack) and remote/http.py (the model APIs:
sleep's fact extraction and `refine`, each named by a line-maker in MODEL_CALLERS). A test keeps that
list in step with the code, so a new sender cannot ship without this check naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from hippoctl.protocol.replies_doctor import OK, WARN, Check
from hippod.base.tenancy import daemon_tenant
from hippod.connectors.slack_api import api_url
from hippod.doctor import hippoctl
from hippod.doctor.settings import StoreConfig
from hippod.embed.service import settings
from hippod.remote.embed_apis import APIS
from hippod.remote.extraction_config import MEMORIES_PER_SLEEP, ExtractionConfig, extraction_config
from hippod.remote.providers import ANTHROPIC
from hippod.remote.rerank import PROVIDERS as RERANK_APIS
from hippod.store.config import STORE_DEFAULTS
from hippod.teamlink import membership
from hippod.teamlink.sender import PULL_SECONDS

NAME = "Network"


# What a feature that calls a model API sends: each line-maker reads the daemon's environment and
# the stores' settings and says what goes where and when (nothing when the feature sends nothing),
# and whether that is memory text leaving the machine on its own (a warning).
ModelLines = Callable[[Mapping[str, str], Sequence[StoreConfig]], list[tuple[str, bool]]]


def network_check(env: Mapping[str, str], stores: Sequence[StoreConfig], global_root: str) -> Check:
    """Where memory text goes (a joined team server, the model APIs turned on), what else calls out.
    A model API that gets memory text unasked (sleep's extraction) is a warning, with the way to
    turn it off."""
    joined = membership.read(global_root)
    model_lines = model_api_lines(env, stores)
    parts = [_team(joined.url, stores) if joined is not None else _no_team(bool(model_lines))]
    warned = False
    for line, warn in model_lines:
        parts.append(line)
        warned = warned or warn
    parts.append(
        f"{hippoctl('slack', 'backfill')} reads a channel from the Slack Web API at {api_url(env)} when you "
        "run it (it sends no memory text)"
    )
    if warned:
        return Check(
            NAME,
            WARN,
            "; ".join(parts),
            fix='set "extraction": {"enabled": false} in a store\'s config.json to keep its memories here',
        )
    return Check(NAME, OK, "; ".join(parts))


def model_api_lines(env: Mapping[str, str], stores: Sequence[StoreConfig]) -> list[tuple[str, bool]]:
    """Every model API feature's lines, in MODEL_CALLERS' order."""
    return [line for lines in MODEL_CALLERS for line in lines(env, stores)]


def _extraction_text(config: ExtractionConfig, env: Mapping[str, str]) -> str:
    return (
        f"sleep sends up to {MEMORIES_PER_SLEEP} memories' text of the tenant it runs for "
        f'("{daemon_tenant(env)}" for the daily sleep, never raw Slack '
        f"or GitHub receipts) to {ANTHROPIC.base_url(env)} with "
        f"{config.model} (at most {config.max_calls} calls, each retry one, {config.max_tokens} tokens "
        f"and {config.max_s:g} s a sleep)"
    )


def extraction_lines(env: Mapping[str, str], stores: Sequence[StoreConfig]) -> list[tuple[str, bool]]:
    """Sleep's fact extraction: what each store's sleep sends, or that the key is set but unused."""
    configs = [(s, extraction_config(s.values, env)) for s in stores if s.problem is None]
    if ANTHROPIC.key(env) is None:
        wanted = [s.path for s, c in configs if c.enabled is True]
        if wanted:
            return [
                (
                    f"extraction is on in {', '.join(wanted)} but {ANTHROPIC.key_env} is not set, "
                    "so sleep sends nothing",
                    False,
                )
            ]
        return []
    on = [(s, c) for s, c in configs if c.active]
    if not on:
        return [(f"{ANTHROPIC.key_env} is set but extraction is off, so sleep sends nothing", False)]
    texts = {_extraction_text(c, env) for _, c in on}
    if len(texts) == 1 and len(on) == len(configs):
        return [(texts.pop(), True)]
    return [(f"{_extraction_text(c, env)} from the store at {_folder(s)}", True) for s, c in on] + [
        (f"extraction is off for the store at {_folder(s)}", False) for s, c in configs if not c.active
    ]


def _folder(store: StoreConfig) -> str:
    return os.path.dirname(store.path)


def refine_lines(env: Mapping[str, str], stores: Sequence[StoreConfig]) -> list[tuple[str, bool]]:
    """`refine`: one memory, when the user runs it; never from a store that turns extraction off."""
    if ANTHROPIC.key(env) is None:
        return []
    configs = [(s, extraction_config(s.values, env)) for s in stores if s.problem is None]
    off = [_folder(s) for s, c in configs if c.turned_off]
    if configs and len(off) == len(configs):
        return [("hippoctl refine sends nothing: extraction is off in every store", False)]
    unless = f" (never from the store at {', '.join(off)}, where extraction is off)" if off else ""
    return [
        (
            f"hippoctl refine <id> sends the one memory you name to {ANTHROPIC.base_url(env)} "
            f"when you run it{unless}",
            False,
        )
    ]


def embedder_and_reranker_lines(
    env: Mapping[str, str], stores: Sequence[StoreConfig]
) -> list[tuple[str, bool]]:
    """What an API embedder (embeddings.provider) and an API reranker (`recall --reranker`, or a
    store's reranker.default) send, and when."""
    parts: list[str] = []
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
    keyed = [api for api in RERANK_APIS.values() if api.key(env) is not None]
    if keyed:
        parts.append(
            f"{hippoctl('recall', '--reranker', keyed[0].name)} sends the query and the top results' text "
            f"to {' or '.join(api.title for api in keyed)}'s rerank API when you run it"
        )
    return [(part, False) for part in parts]


# The features that call a model API, in the order the check names them.
MODEL_CALLERS: list[ModelLines] = [extraction_lines, refine_lines, embedder_and_reranker_lines]


def _no_team(model_apis: bool) -> str:
    if model_apis:
        return "this hippod has joined no team server, so no memory text goes to one"
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
