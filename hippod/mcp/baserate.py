"""`hippo_predict_baserate`: how sessions of one kind have ended before, from the `trace_outcome`
of the trace memories carrying a tag (memory-model.md §6, sleep.md §4). Pure functions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hippoctl.protocol.wording import plural

OUTCOMES = ("success", "failure", "partial")
UNKNOWN = "unknown"  # a trace whose outcome was never set


@dataclass(slots=True)
class Baserate:
    tag: str
    total: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def rate(self, outcome: str) -> float:
        return self.counts.get(outcome, 0) / self.total if self.total else 0.0

    @property
    def rates(self) -> dict[str, float]:
        return {name: round(self.rate(name), 4) for name in self.counts}


def count(tag: str, outcomes: Iterable[str | None]) -> Baserate:
    """Counts per outcome; anything but the three outcomes counts as unknown."""
    result = Baserate(tag)
    for outcome in outcomes:
        key = outcome if outcome in OUTCOMES else UNKNOWN
        result.counts[key] = result.counts.get(key, 0) + 1
        result.total += 1
    return result


def render(result: Baserate) -> str:
    if result.total == 0:
        return f'No trace memories carry the tag "{result.tag}", so there is no base rate yet.'
    lines = [f'Base rate for "{result.tag}" from {plural(result.total, "trace")}:']
    width = max(len(name) for name in result.counts)
    for name, number in result.counts.items():
        if name in OUTCOMES or number:
            lines.append(f"  {name:<{width}}  {number:>5}  {result.rate(name) * 100:5.1f}%")
    return "\n".join(lines)
