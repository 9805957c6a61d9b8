"""The printed `recall` block. The budget counts these exact lines, so they are built here, in the daemon."""

from __future__ import annotations

from hippoctl.protocol.replies import RecallItem
from hippoctl.protocol.wording import plural

BAR_CELLS = 10
# The --why note on a memory that embeddings would rank but that has no current vector yet.
NO_VECTOR = "no vector yet: ranked by words alone"


QUERY_SHOWN = 200  # characters of the query a heading repeats: a long query must not eat the budget


def shown_query(query: str) -> str:
    """The query as a heading repeats it: whole up to QUERY_SHOWN characters, else its start and how
    long it is."""
    if len(query) <= QUERY_SHOWN:
        return query
    return f"{query[:QUERY_SHOWN].rstrip()}… ({len(query):,} characters)"


def heading(count: int, tokens: int, query: str) -> str:
    return f'Found {plural(count, "memory")} ({plural(tokens, "token")}) for: "{shown_query(query)}"'


def reserved_heading(query: str) -> str:
    """The heading with its numbers padded to 6 digits, so its size is known before the fill."""
    return f'Found 000000 memories (000000 tokens) for: "{shown_query(query)}"'


def cutoff(shown: int, candidates: int, skipped_budget: int, skipped_limit: int) -> str:
    parts = [f"showing {shown} of {plural(candidates, 'candidate')}"]
    if skipped_budget:
        parts.append(f"{skipped_budget} skipped to fit the budget")
    if skipped_limit:
        parts.append(f"{skipped_limit} past --limit")
    return "Cutoff: " + "; ".join(parts)


RESERVED_CUTOFF = (
    "Cutoff: showing 000000 of 000000 candidates; 000000 skipped to fit the budget; 000000 past --limit"
)


def _num(value: float) -> str:
    return str(round(value, 3))


def item_block(item: RecallItem, *, why: bool) -> str:
    """One memory: header line, strength bar with tags and date, content, and --why lines."""
    labels = [f"[{item.layer}]", f"[{item.confidence}]"]
    if item.aged:
        labels.append("[aged]")
    if why or item.source in ("global", "team"):
        labels.append(f"[{item.source}]")
    if item.superseded_by:
        labels.append(f"[superseded → {item.superseded_by}]")
    if item.graph is not None:
        labels.append(f"[graph: {item.graph.hops}hop {item.graph.edge}]")
    header = f"--- {item.id} {' '.join(labels)} score={item.score:.3f} strength={item.strength:.2f}"
    filled = round(item.strength * BAR_CELLS)
    bar = "█" * filled + "░" * (BAR_CELLS - filled)
    tags = ", ".join(item.tags) or "-"
    meta = f"{bar} tags: {tags} | retrieved: {item.retrieval_count}x | {item.created[:10]}"
    lines = [header, meta, item.content]
    if why and item.why is not None:
        w = item.why
        if w.matched:
            match = f"matched [{', '.join(w.matched)}]"
        else:
            match = "no direct term match" if w.cosine is not None else "no direct term or embedding match"
        if w.cosine is not None:
            match += f"; cosine: {w.cosine:.2f}"
        elif w.words_only:
            match += f"; {NO_VECTOR}"
        mults = " ".join(f"{name} {_num(value)}" for name, value in w.multipliers.items())
        env = w.envelope
        lines += [
            f"    BM25: {match}",
            f"    multipliers: {mults}",
            f"    envelope: kind={env.get('kind') or '-'} scope={env.get('scope') or '-'} "
            f"owner={env.get('owner') or '-'} artifact={env.get('artifact_ref') or '-'} "
            f"session={env.get('session_id') or '-'}",
        ]
    return "\n".join(lines)


def _smallest_block() -> str:
    """The shortest block item_block can make: one-letter id and labels, nothing else."""
    least = RecallItem(
        id="x",
        source="local",
        layer="x",
        confidence="x",
        aged=False,
        pinned=False,
        score=0.0,
        strength=0.0,
        tokens=0,
        tags=[],
        content="",
        created="",
        last_retrieved="",
        retrieval_count=0,
        half_life_days=0.0,
    )
    return item_block(least, why=False)


# Every block is at least this long plus its id's and content's lengths beyond it (--why only adds
# lines): an item whose floor does not fit the budget's room need not be rendered to be skipped.
SMALLEST_BLOCK = _smallest_block()


def block_floor(memory_id: str, content: str) -> int:
    """The fewest characters item_block can make for a memory with this id and content."""
    return len(SMALLEST_BLOCK) - 1 + len(memory_id) + len(content)


def body(items: list[str], cutoff_line: str | None) -> str:
    """Everything after the heading line: the cutoff line if any, a blank line, the item blocks."""
    rest = f"{cutoff_line}\n" if cutoff_line else ""
    return rest + "\n" + "\n\n".join(items)


def no_results(query: str) -> str:
    return f'No memories found for: "{shown_query(query)}"'


def none_fit(query: str, candidates: int, budget: int) -> str:
    """Memories were found, but the budget is too small to show even one, cut (pack.pack)."""
    found = plural(candidates, "memory")
    too_small = f"a budget of {plural(budget, 'token')} cannot show one"
    return f'{found} found for: "{shown_query(query)}", but {too_small}'
