"""The `tokens` report (continuity.md §7): per-surface totals and their table."""

from __future__ import annotations

from collections.abc import Iterable

from hippoctl.protocol.replies_context import SurfaceTokens, TokensReply
from hippod.store.sqlite.ledger import SURFACES

# Surfaces whose blocks stay in the conversation and are re-read on later model calls.
REREAD_SURFACES = frozenset({"prompt_hook", "compact_resume"})
# Surfaces that skip unchanged blocks.
SKIP_SURFACES = frozenset({"prompt_hook"})


def totals(rows: Iterable[tuple[str, str, int, bool]]) -> tuple[dict[str, SurfaceTokens], SurfaceTokens]:
    """Figures per surface from (surface, kind, tokens, skipped) rows, and their total."""
    surfaces: dict[str, SurfaceTokens] = {name: _empty(name) for name in SURFACES}
    for surface, kind, count, skipped in rows:
        figures = surfaces.setdefault(surface, _empty(surface))
        if kind == "reread":
            figures.reread = (figures.reread or 0) + count
        elif skipped:
            figures.skipped = (figures.skipped or 0) + 1
            figures.saved = (figures.saved or 0) + count
        else:
            figures.sent += count
            figures.sends += 1
    total = SurfaceTokens(
        sent=sum(f.sent for f in surfaces.values()),
        sends=sum(f.sends for f in surfaces.values()),
        reread=sum(f.reread or 0 for f in surfaces.values()),
        skipped=sum(f.skipped or 0 for f in surfaces.values()),
        saved=sum(f.saved or 0 for f in surfaces.values()),
    )
    return surfaces, total


def _empty(surface: str) -> SurfaceTokens:
    rereads = surface in REREAD_SURFACES
    skips = surface in SKIP_SURFACES
    return SurfaceTokens(
        reread=0 if rereads else None, skipped=0 if skips else None, saved=0 if skips else None
    )


def _cell(value: int | None, width: int) -> str:
    return f"{'-' if value is None else f'{value:,}':>{width}}"


def _row(name: str, f: SurfaceTokens) -> str:
    return (
        f"{name:<14}{_cell(f.sent, 7)}{_cell(f.sends, 9)}{_cell(f.reread, 10)}"
        f"{_cell(f.skipped, 10)}{_cell(f.saved, 10)}"
    )


def render(reply: TokensReply) -> str:
    """The table of continuity.md §7."""
    plural = "" if reply.days == 1 else "s"
    where = "" if reply.project is None else f" in {reply.project or 'the global store'}"
    lines = [
        f"Memory tokens, last {reply.days} day{plural}{where} (estimates: characters / 4; "
        "re-reads usually bill at the cached-input rate)",
        f"{'surface':<14}{'sent':>7}{'sends':>9}{'re-read':>10}{'skipped':>10}   saved",
    ]
    lines += [_row(name, figures) for name, figures in reply.surfaces.items()]
    lines.append(_row("total", reply.total))
    return "\n".join(lines)
