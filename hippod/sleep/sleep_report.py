"""What a sleep reports: its typed reply from the plan, the short summary an agent is shown, and the
full report of sleep.md §9 behind `--verbose`.

The summary says what changed in words (what was merged, which conflicts are open, what went
dormant, what was shared and where, what else was removed or learned) and names no memory ids,
phases or sampling, but the global copies' ids, by which a copy is taken back; `--verbose` and
`--json` carry the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from hippoctl.protocol.replies_lifecycle import (
    ConflictCounts,
    DedupeCounts,
    SleepConflict,
    SleepFaded,
    SleepMerge,
    SleepReply,
    SleepShared,
)
from hippoctl.protocol.wording import DRY_RUN, agree, plural
from hippod.continuity import render as layout
from hippod.model.merge import merge_detail
from hippod.model.sleep_plan import Plan

if TYPE_CHECKING:
    from hippod.sleep.auto_share import AutoShared
    from hippod.sleep.extraction import Extraction, Written

DETAIL_LINES = 50
DRY_RUN_HEADER = DRY_RUN
ITEM_CHARS = 120  # a memory's first line in the typed reply
LISTED = 3  # memories of each kind the summary quotes
QUOTE_CHARS = 80  # a quoted memory in the summary
NOTHING = "Nothing to consolidate: no memory was merged, removed or found in conflict."


def cap_details(lines: Sequence[str]) -> list[str]:
    """At most 50 detail lines, then `… N more`."""
    if len(lines) <= DETAIL_LINES:
        return list(lines)
    return [*lines[:DETAIL_LINES], f"… {len(lines) - DETAIL_LINES} more"]


def first_line(text: str, limit: int = ITEM_CHARS) -> str:
    """The text's first non-empty line, whitespace collapsed, cut to `limit` with an ellipsis."""
    return layout.cut(layout.one_line(layout.first_line(text)), limit)


# --- the typed reply ----------------------------------------------------------------------------------


def details(result: Plan) -> list[str]:
    """The detail lines of the full report, one per changed memory."""
    lines: list[str] = []
    for memory, value in result.faded.dormant:
        lines.append(f"moved {memory.id} to dormant (strength {value:.4f} < 0.05)")
    for memory, value in result.faded.deleted:
        lines.append(f"deleted {memory.id} (strength {value:.4f} < 0.05; dormant store disabled)")
    for memory, value in result.faded.secret_deleted:
        lines.append(f"deleted {memory.id} (strength {value:.4f} < 0.05; flagged by the secret detector)")
    for memory_id, _ in result.expired:
        lines.append(f"expired dormant {memory_id}")
    for memory in result.replayed:
        lines.append(f"replayed {memory.id}")
    lines += [merge_detail(merge) for merge in result.merges]
    for dup in result.duplicates:
        lines.append(f"deduped {dup.deleted.id} (overlap {dup.overlap:.2f} with {dup.kept.id})")
    for item in result.junk_removed:
        lines.append(f"removed junk {item.id} ({item.reason})")
    for item in result.junk_warnings:
        lines.append(f"junk warning {item.id} ({item.reason}; kept)")
    return lines


def _conflicts(result: Plan) -> list[SleepConflict]:
    texts = result.live.texts
    changes = result.conflicts
    found = [(d, True) for d in changes.insert]
    found += [(d, True) for _, d in changes.reopen] + [(d, False) for _, d in changes.refresh]
    items: list[SleepConflict] = []
    for detected, new in found:
        a, b = texts.get(detected.a), texts.get(detected.b)
        items.append(
            SleepConflict(
                a=detected.a,
                b=detected.b,
                a_text=first_line(a) if a is not None else "",
                b_text=first_line(b) if b is not None else "",
                reason=detected.reason,
                new=new,
                tenant=detected.tenant,
            )
        )
    return items


def build(
    result: Plan, *, dry_run: bool, shared: Sequence[AutoShared], learned: int, agent_notes: int
) -> SleepReply:
    """The reply of one sleep from its plan (and what phase 12 shared, when known)."""
    faded = result.faded
    counts = DedupeCounts()
    for dup in result.duplicates:
        setattr(counts, dup.kind, getattr(counts, dup.kind) + 1)
    changes = result.conflicts
    return SleepReply(
        dry_run=dry_run,
        active=result.live.active,
        removed=faded.count,
        dormant_moved=len(faded.dormant),
        secret_deleted=len(faded.secret_deleted),
        dormant_expired=len(result.expired),
        merged=sum(len(merge.members) for merge in result.merges),
        semantic_created=len(result.merges),
        replayed=len(result.replayed),
        deduped=counts,
        junk_removed=len(result.junk_removed),
        junk_warnings=len(result.junk_warnings),
        conflicts=ConflictCounts(open=changes.open, new=changes.new, auto_resolved=len(changes.auto_resolve)),
        shared=len(shared),
        shared_memories=_shared(shared),
        learned=learned,
        agent_notes=agent_notes,
        rejected=result.merge_rejected,
        details=cap_details(details(result)),
        merges=[
            SleepMerge(
                semantic_id=merge.semantic.id,
                members=[m.id for m in merge.members],
                text=first_line(merge.first_text),
                tenant=merge.semantic.tenant_id,
            )
            for merge in result.merges
        ],
        went_dormant=[
            SleepFaded(id=m.id, text=first_line(m.content), strength=round(value, 4), tenant=m.tenant_id)
            for m, value in faded.dormant
        ],
        open_conflicts=_conflicts(result),
    )


def _shared(shared: Sequence[AutoShared]) -> list[SleepShared]:
    return [
        SleepShared(
            id=c.memory.id, global_id=c.copy_id, text=first_line(c.memory.content), tenant=c.memory.tenant_id
        )
        for c in shared
    ]


def add_extraction(reply: SleepReply, done: Extraction, written: Written | None) -> None:
    """Put phase 7 in the reply: the facts stored, its detail lines, and why it stored nothing or
    stopped early, when it did."""
    reply.extracted = len(written.facts) if written is not None else 0
    reply.extraction_sent = len(done.answered) if written is not None else 0
    reply.extraction_note = done.note
    reply.details = cap_details([*reply.details, *done.lines])


def add_shared(reply: SleepReply, shared: Sequence[AutoShared]) -> None:
    """Put what phase 12 shared, after the reply was built, in the reply."""
    reply.shared = len(shared)
    reply.shared_memories = _shared(shared)


def for_tenant(reply: SleepReply, tenant: str) -> SleepReply:
    """The reply with only `tenant`'s memories named: one tenant never reads another's text."""
    return msgspec.structs.replace(
        reply,
        merges=[m for m in reply.merges if m.tenant == tenant],
        went_dormant=[d for d in reply.went_dormant if d.tenant == tenant],
        open_conflicts=[c for c in reply.open_conflicts if c.tenant == tenant],
        shared_memories=[c for c in reply.shared_memories if c.tenant == tenant],
    )


def counts_only(reply: SleepReply) -> SleepReply:
    """The reply without the memories it names, as the run record keeps it."""
    return msgspec.structs.replace(reply, merges=[], went_dormant=[], open_conflicts=[], shared_memories=[])


# --- the short summary --------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return f'"{first_line(text, QUOTE_CHARS)}"'


def _listed(bullets: Sequence[str]) -> list[str]:
    lines = [f"  - {b}" for b in bullets[:LISTED]]
    if len(bullets) > LISTED:
        lines.append(f"  … and {len(bullets) - LISTED} more")
    return lines


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _also(reply: SleepReply) -> str | None:
    """One sentence for the rest: removals other than fading to dormant, lessons, the team's queue."""
    d = reply.deduped
    faded = reply.removed - reply.dormant_moved - reply.secret_deleted
    removed = [
        (d.episodic + d.semantic + d.cross_layer, "duplicate", None),
        (reply.junk_removed, "junk memory", None),
        (faded, "faded memory", None),
        (reply.secret_deleted, "faded memory holding a secret", "faded memories holding secrets"),
        (reply.dormant_expired, "expired dormant memory", None),
    ]
    gone = [plural(n, one, many) for n, one, many in removed if n]
    others = [
        ("learned {} from git", reply.learned, "lesson"),
        ("imported {}", reply.agent_notes, "agent note"),
        ("queued {} for the team", reply.shared_team, "memory"),
    ]
    parts = [f"removed {_and(gone)}"] if gone else []
    parts += [form.format(plural(n, one)) for form, n, one in others if n]
    return f"Also {'; '.join(parts)}." if parts else None


def summary_lines(reply: SleepReply) -> list[str]:
    """The short summary, or no lines when the sleep changed nothing worth telling."""
    lines: list[str] = []
    if reply.merges:
        merged = sum(len(m.members) for m in reply.merges)
        lines.append(f"Merged {plural(merged, 'related memory')} into {len(reply.merges)}:")
        lines += _listed([f"{_quote(m.text)} ({len(m.members)} memories)" for m in reply.merges])
    if reply.open_conflicts:
        count = len(reply.open_conflicts)
        it = agree(count, "it")
        lines.append(
            f"{plural(count, 'open conflict')} "
            f"(`hippoctl conflicts` lists {it}, `hippoctl resolve <n>` settles {it}):"
        )
        lines += _listed(
            [
                f"{_quote(c.a_text)} vs {_quote(c.b_text)} ({'new' if c.new else 'open'})"
                for c in reply.open_conflicts
            ]
        )
    if reply.went_dormant:
        count = len(reply.went_dormant)
        lines.append(
            f"{plural(count, 'memory')} went dormant after fading from disuse "
            "(`hippoctl dormant` lists them, `hippoctl dormant restore <id>` brings one back):"
        )
        lines += _listed([_quote(d.text) for d in reply.went_dormant])
    lines += _extraction_lines(reply)
    lines += _shared_lines(reply)
    also = _also(reply)
    if also is not None:
        lines.append(also)
    return lines


def _extraction_lines(reply: SleepReply) -> list[str]:
    """What fact extraction stored, and why it stored nothing or stopped, when it did."""
    lines: list[str] = []
    if reply.extracted:
        lines.append(
            f"Extracted {plural(reply.extracted, 'fact')} from {plural(reply.extraction_sent, 'memory')} "
            "through Anthropic's API (tagged `extracted`)."
        )
    if reply.extraction_note:
        note = reply.extraction_note
        lines.append(note[0].upper() + note[1:] + ".")
    return lines


def _shared_lines(reply: SleepReply) -> list[str]:
    """What auto-share copied to the global store, where every project sees it, and how to take a
    copy back or stop it (sleep.md §8)."""
    if not reply.shared:
        return []
    verb = "Would share" if reply.dry_run else "Shared"
    lines = [
        f"{verb} {plural(reply.shared, 'lesson')} with the global store, "
        "where every project's recall, context and prompt hook can show "
        f"{agree(reply.shared, 'it')}:"
    ]
    shared = reply.shared_memories
    lines += _listed([_quote(c.text) + (f" as {c.global_id}" if c.global_id else "") for c in shared])
    undo = "" if reply.dry_run else "`hippoctl forget <g_id>` takes a copy back; "
    lines.append(
        f'  ({undo}"autoShareOnSleep": false in the project\'s .hippo/config.json turns auto-share off)'
    )
    return lines


def summary(reply: SleepReply) -> str:
    """What `sleep` prints by default: the summary, or a line saying nothing changed."""
    text = "\n".join(summary_lines(reply) or [NOTHING])
    return f"{DRY_RUN_HEADER}\n{text}" if reply.dry_run else text


# --- the full report (--verbose) ----------------------------------------------------------------------


def _row(label: str, value: int) -> str:
    return f"  {label}{value:>{23 - len(label)}}"


def render(reply: SleepReply) -> str:
    """The results block of sleep.md §9, under the dry-run header for --dry-run."""
    decay_deleted = reply.removed - reply.dormant_moved - reply.secret_deleted
    removed = _row("Removed (decayed):", reply.removed)
    if reply.removed:
        parts = [f"dormant {reply.dormant_moved}"]
        if decay_deleted:
            parts.append(f"deleted {decay_deleted}")
        parts.append(f"deleted as secret {reply.secret_deleted}")
        removed += f"   ({', '.join(parts)})"
    d, c = reply.deduped, reply.conflicts
    deduped = d.episodic + d.semantic + d.cross_layer
    lines = [
        "Running consolidation...",
        "",
        "Results:",
        _row("Active memories:", reply.active),
        removed,
        _row("Merged episodic:", reply.merged),
        _row("New semantic:", reply.semantic_created),
        _row("Dormant expired:", reply.dormant_expired),
        f"Learned {plural(reply.learned, 'lesson')} from git; "
        f"imported {plural(reply.agent_notes, 'agent note')}",
        f"Deduped {plural(deduped, 'duplicate')} "
        f"(episodic {d.episodic}, semantic {d.semantic}, cross-layer {d.cross_layer})",
        f"Removed {plural(reply.junk_removed, 'junk memory')} ({plural(reply.junk_warnings, 'warning')})",
        f"Open conflicts: {c.open} ({c.new} new, {c.auto_resolved} auto-resolved)",
        f"Auto-shared {plural(reply.shared, 'memory')} to the global store",
    ]
    lines += [f"  {c.id} as {c.global_id or '-'}: {c.text}" for c in reply.shared_memories]
    if reply.shared_team:
        lines.append(f"Queued {plural(reply.shared_team, 'memory')} for the team")
    if reply.details:
        lines.append("Details:")
        lines += [f"  {line}" for line in reply.details]
    text = "\n".join(lines)
    return f"{DRY_RUN_HEADER}\n{text}" if reply.dry_run else text
