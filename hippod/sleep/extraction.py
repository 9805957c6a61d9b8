"""Sleep's phase 7, fact extraction (sleep.md §4): the newest episodic memories not yet processed
are sent to Anthropic's Messages API, one call each, and each fact the model finds in one becomes a
memory of its own, tagged `extracted` and linked to its source.

The calls are made first, outside any transaction (`ask`); what their answers bring is written in
the sleep's one transaction (`write`). A failed call stops the phase, and the phase then writes
nothing: no fact and no processed mark, so the next sleep sends the same memories again."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import cast

import aiosqlite

from hippoctl.protocol import validate
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.lifecycle.new_memory import new_id
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.model.tokenize import text_overlap
from hippod.remote import anthropic
from hippod.remote.extraction_config import MEMORIES_PER_SLEEP, ExtractionConfig, extraction_config
from hippod.remote.http import Caller, Policy
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
    # Memories left for the next sleep because the spend cap was reached.
    waiting: int = 0
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


async def ask(store: SqliteStore, tenant: str | None, *, dry_run: bool) -> Extraction:
    """Send the memories due for extraction (none in a dry run, when extraction is off or without a
    key) and read the answers; nothing is written here."""
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
    assert config.key is not None
    done.spend = Spend(config.max_calls, config.max_tokens)
    started = time.monotonic()
    policy = Policy(timeout_s=config.timeout_s)
    async with Caller(ANTHROPIC, config.key, policy) as caller:
        for index, memory in enumerate(due):
            if not done.spend.allows():
                done.waiting = len(due) - index
                break
            try:
                reply = await anthropic.message(
                    caller,
                    model=config.model,
                    system=SYSTEM,
                    user=user_turn(memory.content),
                    max_tokens=MAX_TOKENS,
                )
            except HippoError as exc:
                done.failed = exc.message
                break
            done.spend.charge(reply.tokens)
            done.answered.append(Answered(memory, parse_facts(reply.text)))
    done.seconds = time.monotonic() - started
    if done.failed is not None:
        log.warning("sleep of %s: extraction failed: %s", store.root, done.failed)
        done.answered = []
        done.say(
            f"extraction skipped: {done.failed}; nothing was stored from it, and the next sleep tries again"
        )
    elif done.waiting:
        done.say(
            f"extraction stopped at its spend cap ({done.spend.describe()}): "
            f"{plural(done.waiting, 'memory')} left for the next sleep"
        )
    return done


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
    if not done.answered or done.config is None:
        return written
    half_life = float(store.config.get("defaultHalfLifeDays", 365))
    live = await rows.still_live(conn, [a.source.id for a in done.answered])
    processed: list[rows.Processed] = []
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
