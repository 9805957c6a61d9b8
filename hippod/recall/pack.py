"""Packing memories into a budget (recall.md §7): whole ones in rank order, then one that does not
fit cut to what is left, so the printed block never passes the budget.

Used by `recall` (and so MCP and HTTP recall) and `context`; the per-prompt hook's block applies
the same rule with its exact renderer (pinned_block.fill).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hippod.recall import cut
from hippod.recall.budget import LazySizes, fill_budget

# cost(index, text): what item `index` costs printed with `text` in place of its content, in the
# budget's unit.
Cost = Callable[[int, str], int]


@dataclass(frozen=True, slots=True)
class Packed:
    """The items taken in rank order, the cut text of those that are cut, and what the rest were."""

    taken: list[int]
    cut: dict[int, str]  # index -> the cut text shown in place of the memory's content
    sizes: dict[int, int]  # index -> what the item costs as shown
    skipped_budget: int
    skipped_limit: int
    used: int


def pack(
    ids: Sequence[str],
    contents: Sequence[str],
    cost: Cost,
    budget: int,
    *,
    reserved: int = 0,
    min_results: int = 0,
    limit: int | None = None,
    floors: Sequence[int] | None = None,
) -> Packed:
    """Fill `budget` in rank order with whole items (skipping one that does not fit and going on),
    then cut what is left of it into the items not taken:

    - fewer than `min_results` taken: the first skipped ones up to that number, each cut to what is
      left after the smallest cut of those after it; when not even a marker fits, fewer of them;
    - otherwise the first skipped item longer than cut.LEAST_TEXT, if at least that much of it fits.

    `floors` are cheap lower bounds of the whole costs, as fill_budget takes them.
    """
    sizes = LazySizes(len(contents), lambda index: cost(index, contents[index]))
    whole = fill_budget(sizes, budget, reserved=reserved, limit=limit, floors=floors)
    taken = set(whole.taken)
    # Items past --limit were never looked at; the others not taken did not fit whole.
    skipped = [i for i in range(len(contents) - whole.skipped_limit) if i not in taken]
    room = budget - whole.used
    slots = len(skipped) if limit is None else min(len(skipped), limit - len(whole.taken))
    wanted = min(max(0, min_results - len(whole.taken)), slots)
    cuts = _kept(ids, contents, cost, skipped[:wanted], room) if wanted else {}
    if not wanted and slots > 0:
        cuts = _fill_up(ids, contents, cost, skipped, room)
    cut_sizes = {index: cost(index, text) for index, text in cuts.items()}
    return Packed(
        taken=sorted(taken | set(cuts)),
        cut=cuts,
        sizes={**{index: sizes[index] for index in whole.taken}, **cut_sizes},
        skipped_budget=whole.skipped_budget - len(cuts),
        skipped_limit=whole.skipped_limit,
        used=whole.used + sum(cut_sizes.values()),
    )


def _within(cost: Cost, index: int, room: int) -> Callable[[str], bool]:
    """Whether item `index` printed with a given text costs at most `room`."""

    def fits(text: str) -> bool:
        return cost(index, text) <= room

    return fits


def _fill_up(
    ids: Sequence[str], contents: Sequence[str], cost: Cost, skipped: list[int], room: int
) -> dict[int, str]:
    """The first skipped item longer than cut.LEAST_TEXT (a shorter one's cut would cost more than it
    whole), cut to `room` if that much of its text fits. Only the first is tried: another's header
    is much the same size, and trying each would cost a recall a render per skipped item."""
    index = next((i for i in skipped if len(contents[i]) > cut.LEAST_TEXT), None)
    if index is None:
        return {}
    text = cut.fit(contents[index], ids[index], _within(cost, index, room))
    return {} if text is None else {index: text}


def _kept(
    ids: Sequence[str], contents: Sequence[str], cost: Cost, chosen: list[int], room: int
) -> dict[int, str]:
    """Items kept for --min-results, each cut to what is left once the smallest cuts of those after it
    (a marker and the first cut.LEAST_TEXT characters) are set aside; the last ones are given up
    while not even their markers fit, so the budget holds."""

    def smallest(index: int) -> int:
        return cost(index, cut.cut_text(contents[index], ids[index], cut.LEAST_TEXT))

    while chosen:
        left = room
        cuts: dict[int, str] = {}
        for position, index in enumerate(chosen):
            later = sum(smallest(i) for i in chosen[position + 1 :])
            allowed = left - later
            text = cut.fit(contents[index], ids[index], _within(cost, index, allowed), least=0)
            if text is None:
                break
            cuts[index] = text
            left -= cost(index, text)
        else:
            return cuts
        chosen = chosen[:-1]
    return {}
