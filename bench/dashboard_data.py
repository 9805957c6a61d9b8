"""A store for the dashboard bench: `size` memories written with hippod's own store code (a spread of
ages, retrievals, outcome marks, pins and layers, a few long unused), 30 days of token-ledger rows,
then, through the daemon's socket, contradicting and overlapping memories, two real sleeps (which
merge, park the faded in the dormant store and find conflicts) and a work queue of cards.

Writing the memories directly is what makes 100,000 of them take a minute rather than the socket's
ninety seconds plus a first sleep of ten minutes: they are stamped as settled by an earlier sleep, so
the two sleeps compare only what arrived since (as a daily sleep does) and pass over the rest once.
"""

from __future__ import annotations

import asyncio
import os
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from corpus import TEXT_SEED, make_corpus, make_memories
from harness import BenchError, Sandbox, call, log, start_daemon, stop_daemon, wait_for_mirrors

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippod.base.clock import iso
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.store.sqlite import ledger, memories
from hippod.store.sqlite.db import Database

SLEEP_TIMEOUT = 900.0
CONFLICT_SUBJECTS = ("billing", "search", "uploads", "exports", "webhooks", "invoices", "previews", "reports")
MERGE_TOPICS = ("the nightly backup job", "the staging database", "the release checklist", "the log shipper")
LEDGER_DAYS = 30


def _memory(rng: random.Random, text: str, tags: list[str], now: datetime) -> Memory:
    """One planted memory: created up to 400 days ago (2% five to seven years ago and never used
    since, which the first sleep parks), retrieved some time after, with marks now and then."""
    old = rng.random() < 0.02
    age = rng.uniform(1800, 2500) if old else rng.uniform(1, 400)
    created = now - timedelta(days=age)
    last = created if old else created + timedelta(days=rng.uniform(0, age - 0.5))
    retrievals = 0 if old else min(60, int(rng.expovariate(0.4)))
    tags = [*tags, "error"] if rng.random() < 0.08 else tags
    stamp = iso(created)
    return Memory(
        id=f"mem_{rng.getrandbits(48):012x}",
        tenant_id="default",
        content=text,
        layer=rng.choices(("episodic", "semantic", "trace"), (80, 15, 5))[0],
        kind="distilled",
        created=stamp,
        valid_from=stamp,
        last_retrieved=iso(last),
        retrieval_count=retrievals,
        half_life_days=st.initial_half_life(tags) + 2.0 * retrievals,
        strength=1.0,
        emotional_valence=st.valence_for_tags(tags),
        schema_fit=0.5,
        tags=tags,
        source="cli",
        confidence=rng.choice(("verified", "observed")),
        pinned=rng.random() < 0.003,
        outcome_positive=int(rng.random() < 0.1) * rng.randint(1, 4),
        outcome_negative=int(rng.random() < 0.05) * rng.randint(1, 3),
        outcome_score=None,
        updated_at=iso(last),
    )


async def _plant(db_path: str, size: int, now: datetime) -> None:
    rng = random.Random(TEXT_SEED + size)
    texts = make_memories(make_corpus(), size, TEXT_SEED + size)
    db, _ = await Database.open(db_path)
    try:
        async with db.transaction() as conn:
            for text, tags in texts:
                await memories.insert(conn, _memory(rng, text, tags, now))
            # Settled by a sleep an hour ago: the next sleeps compare only what comes after.
            await memories.set_meta(conn, "last_sleep", iso(now - timedelta(hours=1)))
            for day in range(LEDGER_DAYS):
                when = now - timedelta(days=day, hours=rng.uniform(0, 20))
                for _ in range(rng.randint(10, 60)):
                    surface = rng.choice(("prompt_hook", "prompt_hook", "context", "recall", "mcp"))
                    tokens = rng.randint(80, 1500)
                    skipped = surface == "prompt_hook" and rng.random() < 0.4
                    row = ledger.LedgerRow(surface, tokens, items=rng.randint(1, 8), skipped=skipped)
                    await ledger.record(conn, "default", row, when)
                    if surface == "prompt_hook" and not skipped:
                        reread = ledger.LedgerRow(surface, tokens * rng.randint(1, 6), kind="reread")
                        await ledger.record(conn, "default", reread, when)
    finally:
        await db.close()


def _ok(sb: Sandbox, body: Any, timeout: float = 60.0) -> Any:
    reply = call(sb.sock, sb.home, sb.base, body, timeout=timeout)
    if not isinstance(reply, m.Result):
        raise BenchError(f"{type(body).__name__} failed: {reply}")
    return reply.data


def _activity(sb: Sandbox, round_: int) -> None:
    """Memories a sleep will find contradicting or overlapping, then that sleep."""
    for subject in CONFLICT_SUBJECTS[round_ * 4 : round_ * 4 + 4]:
        for state in ("enabled", "disabled"):
            _ok(sb, m.Remember(content=f"The {subject} feature flag is {state} for production users"))
    for topic in MERGE_TOPICS[round_ * 2 : round_ * 2 + 2]:
        for detail in ("runs at two in the morning", "runs at two in the morning and mails the team"):
            _ok(sb, m.Remember(content=f"Remember that {topic} {detail} every day of the week"))
    _ok(sb, m.Sleep(no_share=True), timeout=SLEEP_TIMEOUT)


def _cards(sb: Sandbox) -> None:
    """Forty cards spread over every state of the board."""
    for i in range(1, 41):
        depends = [i - 1] if i % 10 == 0 else []
        _ok(
            sb,
            mc.CardCreate(title=f"Card {i}: tidy the {CONFLICT_SUBJECTS[i % 8]} module", depends_on=depends),
        )
    for card in range(1, 19):
        if card % 10 == 0:
            continue  # waiting on the card before it
        _ok(sb, mc.CardClaim(id=card, runtime="bench"))
        if card <= 3:
            _ok(sb, mc.CardBlock(id=card, reason="needs a decision"))
        elif card <= 12:
            _ok(sb, mc.CardReview(id=card))
            if card <= 9:
                _ok(sb, mc.CardComplete(id=card, outcome="success" if card % 2 else "failure"))


def build(sb: Sandbox, size: int) -> Any:
    """Fill the sandbox's global store; returns the running daemon."""
    proc = start_daemon(sb)
    _ok(sb, m.Status())  # creates the global store
    stop_daemon(proc)
    log(f"size {size}: planting")
    # In a thread of its own: the browser's driver keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _plant(os.path.join(sb.home, "hippo.db"), size, datetime.now(UTC))).result()
    proc = start_daemon(sb)
    took, missing = wait_for_mirrors(sb.home, size)
    log(f"size {size}: mirrors written in {took:.1f} s ({missing} missing)")
    for round_ in (0, 1):
        _activity(sb, round_)
        log(f"size {size}: sleep {round_ + 1} done")
    _cards(sb)
    for query in ("feature flag production", "backup job", "staging database"):
        _ok(sb, m.Recall(query=query))
    return proc
