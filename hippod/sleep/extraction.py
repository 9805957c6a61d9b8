"""Sleep's phase 7, fact extraction (sleep.md §4): the newest episodic memories not yet processed
are sent to Anthropic's Messages API, one call each, and each fact the model finds in one becomes a
memory of its own, tagged `extracted` and linked to its source.

The calls are made first, outside any transaction (`ask`); what their answers bring is written in
the sleep's one transaction (`write`). Only the sleeping tenant's own notes are sent (kind
`distilled`: never a raw receipt). A memory the API refuses for what it carries (HTTP 400
`invalid_request_error`) is marked `failed`, never sent again, and the phase goes on. Any other
failed call (a refused key, a rate limit, an overloaded or failing server, a timeout) stops the
phase, which then writes nothing, not even the answers already in: no fact and no processed mark,
so the store is as it was and the next sleep sends the same memories again. The spend cap
(`maxCalls` HTTP requests, retries included; `maxTokens`) and the time limit (`maxSeconds`) stop it
too, but then the answers in are written and the rest wait for the next sleep."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import cast

import aiosqlite

from hippoctl.protocol import validate
from hippoctl.protocol.wording import agree, plural
from hippod.base.errors import HippoError
from hippod.lifecycle.new_memory import new_id
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.model.tokenize import text_overlap
from hippod.remote import anthropic
from hippod.remote.extraction_config import MEMORIES_PER_SLEEP, ExtractionConfig, extraction_config
from hippod.remote.http import SPENT, Caller, Policy
from hippod.remote.providers import ANTHROPIC
from hippod.remote.spend import Spend
from hippod.sleep.extraction_prompt import MAX_TOKENS, SYSTEM, parse_facts, user_turn
from hippod.store.sqlite import extraction as rows
from hippod.store.sqlite import memories
from hippod.store.stores import SqliteStore

log = logging.getLogger("hippod.sleep")

TAG = "extracted"
SOURCE = "extraction"
# A fact whose words overlap a stored memory's this much (Jaccard, recall.md §3) is a near-copy of
# it, as sleep's dedupe counts one (sleep.md §6).
NEAR_COPY = 0.7
# Tags a fact takes from its source: where it applies and who may see it.
_KEPT_TAG_PREFIXES = ("path:", "scope:")


@dataclass
class Answered:
    """One memory sent, and the facts read from the answer (None: the answer held none readable)."""

    source: Memory
    facts: list[str] | None


@dataclass
class Extraction:
    """What phase 7 brought back before the sleep's transaction, and what it has to say."""

    config: ExtractionConfig | None = None
    answered: list[Answered] = field(default_factory=list)
    spend: Spend | None = None
    # Why the phase wrote nothing (a failed call), or None.
    failed: str | None = None
    # Memories the API refused for what they carry (HTTP 400), with its line: marked `failed`.
    refused: list[tuple[Memory, str]] = field(default_factory=list)
    # Memories left for the next sleep because the spend cap or the time limit was reached.
    waiting: int = 0
    out_of_time: bool = False
    seconds: float = 0.0
    # Why the phase stored nothing or stopped early, or what a dry run would send: one line.
    note: str | None = None
    lines: list[str] = field(default_factory=list)

    def say(self, note: str) -> None:
        """The phase's one note, also a detail line."""
        self.note = note
        self.lines.append(note)


@dataclass
class Written:
    """What `write` stored: the facts, and how many the store refused (rejected or near-copies)."""

    facts: list[Memory] = field(default_factory=list)
    rejected: int = 0
    near_copies: int = 0
    sources: int = 0


async def ask(store: SqliteStore, tenant: str, *, dry_run: bool) -> Extraction:
    """Send the tenant's memories due for extraction (none in a dry run, when extraction is off or
    without a key) and read the answers; nothing is written here."""
    config = extraction_config(store.config)
    done = Extraction(config=config)
    if config.turned_off:
        return done
    if not config.active:
        if config.enabled is True:
            done.say(
                f"extraction skipped: it is on, but {ANTHROPIC.key_env} is not in the daemon's environment"
            )
        return done
    due = await rows.candidates(store.db.reader, tenant, MEMORIES_PER_SLEEP)
    if dry_run:
        if due:
            done.say(
                f"extraction would send {plural(len(due), 'memory')} to {config.base_url()} "
                f"with {config.model}"
            )
        return done
    if not due:
        return done
    started = time.monotonic()
    await _send(done, config, due)
    done.seconds = time.monotonic() - started
    _conclude(store, done)
    return done


async def _send(done: Extraction, config: ExtractionConfig, due: list[Memory]) -> None:
    """One call per memory, newest first, until the spend cap (every HTTP request counts, retries
    too), the phase's time limit or a failure stops them."""
    assert config.key is not None
    done.spend = spend = Spend(config.max_calls, config.max_tokens)
    deadline = time.monotonic() + config.max_s
    policy = Policy(timeout_s=config.timeout_s)
    async with Caller(ANTHROPIC, config.key, policy, spend) as caller:
        for index, memory in enumerate(due):
            left = deadline - time.monotonic()
            if not spend.allows() or left <= 0:
                done.waiting, done.out_of_time = len(due) - index, left <= 0
                return
            try:
                reply = await asyncio.wait_for(
                    anthropic.message(
                        caller,
                        model=config.model,
                        system=SYSTEM,
                        user=user_turn(memory.content),
                        max_tokens=MAX_TOKENS,
                    ),
                    left,
                )
            except TimeoutError:
                done.waiting, done.out_of_time = len(due) - index, True
                return
            except HippoError as exc:
                if exc.code == SPENT:
                    done.waiting = len(due) - index
                    return
                if not _refuses_the_memory(exc):
                    done.failed = exc.message
                    return
                if done.refused and not done.answered:
                    # Two memories refused and none answered: the request itself is at fault (a
                    # setting the API will not take), not the memories; none is marked.
                    done.failed = exc.message
                    return
                done.refused.append((memory, exc.message))
                continue
            spend.charge(reply.tokens)
            done.answered.append(Answered(memory, parse_facts(reply.text)))


def _refuses_the_memory(exc: HippoError) -> bool:
    """Whether the API refused a request for what it carries (HTTP 400 `invalid_request_error`, 413
    `request_too_large`): sending the same memory again would be refused again. Everything else (a
    refused key, a rate limit, an overloaded or failing server, a timeout) may pass by the next sleep."""
    status, kind = exc.details.get("status"), exc.details.get("type")
    if (status, kind) not in ((400, "invalid_request_error"), (413, "request_too_large")):
        return False
    # The API answers an account's trouble (credit run out, a usage limit) with the same 400: that
    # passes, and says nothing of the memory.
    said = exc.message.lower()
    return not any(word in said for word in _ACCOUNT_WORDS)


_ACCOUNT_WORDS = ("credit balance", "usage limit", "billing", "rate limit", "quota")


def _conclude(store: SqliteStore, done: Extraction) -> None:
    """The phase's note: a failure (then nothing is kept to write: no fact, no mark, and every memory
    is sent again by the next sleep, answered ones included, so the store stays as it was), or a stop
    at the spend cap or the time limit (the answers in are written, the rest wait)."""
    if done.failed is not None:
        log.warning("sleep of %s: extraction failed: %s", store.root, done.failed)
        done.answered, done.refused = [], []
        done.say(
            f"extraction skipped: {done.failed}; nothing was stored from it, and the next sleep tries again"
        )
        return
    for memory, why in done.refused:
        done.lines.append(f"extraction: {why}; {memory.id} is marked failed and not sent again")
    if done.waiting and done.out_of_time and done.config is not None:
        done.say(
            f"extraction stopped at its time limit (extraction.maxSeconds {done.config.max_s:g} s): "
            f"{plural(done.waiting, 'memory')} left for the next sleep"
        )
    elif done.waiting and done.spend is not None:
        done.say(
            f"extraction stopped at its spend cap ({done.spend.describe()}): "
            f"{plural(done.waiting, 'memory')} left for the next sleep"
        )
    elif done.refused:
        done.say(
            f"extraction: Anthropic refused {plural(len(done.refused), 'memory', 'memories')} for what "
            f"{agree(len(done.refused), 'it holds', 'they hold')}; marked failed, not sent again"
        )


def _fact(source: Memory, text: str, now: str, half_life: float) -> Memory:
    """A fact as its own episodic memory, linked to its source (`extracted_from`, and `parents`, which
    recall's drill-down follows and which keeps sleep's dedupe from deleting either for the other)."""
    tags = [TAG, *(t for t in source.tags if t.startswith(_KEPT_TAG_PREFIXES))]
    return Memory(
        id=new_id(),
        tenant_id=source.tenant_id,
        content=text,
        layer="episodic",
        kind="distilled",
        created=now,
        valid_from=now,
        last_retrieved=now,
        retrieval_count=0,
        half_life_days=half_life,
        strength=1.0,
        emotional_valence=st.valence_for_tags(tags),
        schema_fit=0.5,
        tags=tags,
        source=SOURCE,
        confidence="inferred",
        pinned=False,
        outcome_positive=0,
        outcome_negative=0,
        outcome_score=None,
        parents=[source.id],
        scope=source.scope,
        owner=source.owner,
        origin_project=source.origin_project,
        source_session_id=source.source_session_id,
        extracted_from=source.id,
        updated_at=now,
    )


async def _near_copy(
    conn: aiosqlite.Connection, store: SqliteStore, fact: Memory, kept: list[Memory]
) -> bool:
    """Whether the fact repeats its source, a fact kept in this run, or a stored memory."""
    texts = [m.content for m in kept if m.tenant_id == fact.tenant_id]
    texts += await rows.nearby_texts(conn, fact.tenant_id, fact.content, fts5=store.fts5)
    return any(text_overlap(fact.content, text) > NEAR_COPY for text in texts)


async def write(transaction: object, store: SqliteStore, done: Extraction, now: str) -> Written:
    """Store the facts of the answers and mark their sources processed, inside the sleep's
    transaction (`transaction`, the SQLite store's connection). A fact whose value was rejected
    before, or that nearly copies a stored memory, is refused; a source the sleep removed
    meanwhile brings no fact."""
    conn = cast(aiosqlite.Connection, transaction)
    written = Written()
    if not (done.answered or done.refused) or done.config is None:
        return written
    half_life = float(store.config.get("defaultHalfLifeDays", 365))
    live = await rows.still_live(conn, [a.source.id for a in done.answered] + [m.id for m, _ in done.refused])
    processed = [rows.Processed(m.id, m.tenant_id, 0, "failed") for m, _ in done.refused if m.id in live]
    for answer in done.answered:
        source = answer.source
        if source.id not in live:
            continue
        stored = 0
        for text in answer.facts or []:
            if validate.content_problem(text) is not None:
                continue
            fact = _fact(source, text, now, half_life)
            if text_overlap(text, source.content) > NEAR_COPY or await _near_copy(
                conn, store, fact, written.facts
            ):
                written.near_copies += 1
                continue
            if not await memories.insert(conn, fact):
                written.rejected += 1
                continue
            written.facts.append(fact)
            stored += 1
            done.lines.append(f"extracted {fact.id} from {source.id}")
        status = "sent" if answer.facts is not None else "unreadable"
        if answer.facts is None:
            done.lines.append(f"extraction: the model's answer for {source.id} held no readable facts")
        processed.append(rows.Processed(source.id, source.tenant_id, stored, status))
    written.sources = len(processed)
    await rows.mark(conn, processed, now=now, model=done.config.model)
    if written.facts:
        for tenant in {f.tenant_id for f in written.facts}:
            await memories.audit_many(
                conn,
                ts=now,
                tenant=tenant,
                actor="daemon",
                op="extract",
                targets=[f.id for f in written.facts if f.tenant_id == tenant],
            )
    if written.rejected or written.near_copies:
        done.lines.append(
            f"extraction refused {plural(written.rejected, 'rejected fact')} and "
            f"{plural(written.near_copies, 'near-copy', 'near-copies')} of stored memories"
        )
    return written
