"""The shared import core (ingest.md §1): trim, drop, cut, then de-duplicate and check rejections.

CPU-bound: the handler runs them in a worker thread. De-duplication is exactly
`textOverlap(chunk, m) > 0.7` against every live memory of the target store and tenant (asked of
store/sqlite/import_probe.py, which looks each chunk up in the FTS index) and every chunk accepted earlier
in the run (a prefix-filter index over the run's chunks, model/simjoin.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from hippod.calls.progress import Steps
from hippod.ingest.chunking import Chunk
from hippod.model.simjoin import SetIndex
from hippod.model.tokenize import tokenize

MIN_CHARS = 10
MAX_CHARS = 1000
DUPLICATE_ABOVE = 0.7
PREVIEW_CHARS = 80
# Texts judged between two questions to the store (and two progress ticks).
JUDGE_BATCH = 1024

# Which of the given positions of an import's token sets overlap a stored memory above
# DUPLICATE_ABOVE (StoredProbe.duplicates, store/sqlite/import_probe.py).
StoredDuplicates = Callable[[Sequence[frozenset[str]], Sequence[int]], Collection[int]]


class Verdict(Enum):
    NEW = "new"
    DUPLICATE = "duplicate"
    REJECTED = "rejected"


@dataclass(slots=True)
class Prepared:
    """The chunks that count (the M of "Imported N of M"), ready to be judged."""

    texts: list[str] = field(default_factory=list)
    tags: list[list[str]] = field(default_factory=list)
    truncated: list[int] = field(default_factory=list)  # 1-based chunk numbers that were cut


def merge_tags(*groups: Sequence[str]) -> list[str]:
    """Tags in first-seen order, blanks and repeats dropped."""
    return list(dict.fromkeys(t.strip() for group in groups for t in group if t.strip()))


def prepare(chunks: Sequence[Chunk], format_tags: Sequence[str], extra_tags: Sequence[str]) -> Prepared:
    """Trim each chunk; drop those under 10 chars (not counted); cut those over 1000 chars.

    Tags are the format tags, then the chunk's section tags, then each `--tag`.
    """
    out = Prepared()
    for chunk in chunks:
        text = chunk.text.strip()
        if len(text) < MIN_CHARS:
            continue
        if len(text) > MAX_CHARS:
            # The cut can leave trailing spaces; a memory's text is always trimmed.
            text = text[:MAX_CHARS].rstrip()
            out.truncated.append(len(out.texts) + 1)
        out.texts.append(text)
        out.tags.append(merge_tags(format_tags, chunk.tags, extra_tags))
    return out


def token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def judge(
    texts: Sequence[str],
    digests: Sequence[str],
    stored: StoredDuplicates,
    rejected: Collection[str],
    *,
    check: Sequence[bool] | None = None,
    steps: Steps | None = None,
) -> list[Verdict]:
    """A verdict for each text, in order: a duplicate of a live memory (those of its positions
    `stored` names) or of an earlier accepted text; else rejected when its digest is tombstoned;
    else new.

    Texts with `check[i]` false skip the duplicate test and never enter the index (superseded
    records of a JSON export, which follow their replacement); the rejection test still applies.
    `stored` is asked a batch at a time, and the current step of `steps` hears how many texts have
    been judged after each batch.
    """
    batches = judge_batches(texts, digests, stored, rejected, check=check, steps=steps)
    return [verdict for _, verdicts in batches for verdict in verdicts]


def judge_batches(
    texts: Sequence[str],
    digests: Sequence[str],
    stored: StoredDuplicates,
    rejected: Collection[str],
    *,
    check: Sequence[bool] | None = None,
    steps: Steps | None = None,
) -> Iterator[tuple[int, list[Verdict]]]:
    """`judge`'s verdicts a batch of JUDGE_BATCH texts at a time, each with the position of its
    first text: a caller can act on one batch while the next is judged."""
    steps = steps or Steps.quiet()
    sets = [token_set(t) for t in texts]
    # Only the run's own texts go in this index; the store is `stored`'s to search.
    index = SetIndex(sets, DUPLICATE_ABOVE)
    for start in range(0, len(texts), JUDGE_BATCH):
        end = min(start + JUDGE_BATCH, len(texts))
        checked = [i for i in range(start, end) if check is None or check[i]]
        known = stored(sets, checked)
        chosen = set(checked)
        verdicts: list[Verdict] = []
        for i in range(start, end):
            if i in chosen and (i in known or index.matches(i, strict=True)):
                verdicts.append(Verdict.DUPLICATE)
            elif digests[i] in rejected:
                verdicts.append(Verdict.REJECTED)
            else:
                if i in chosen:
                    index.add(i)
                verdicts.append(Verdict.NEW)
        steps.tick(end)
        yield start, verdicts


def nothing_stored(sets: Sequence[frozenset[str]], positions: Sequence[int]) -> set[int]:
    """The StoredDuplicates of an empty store."""
    return set()


def overlapping_sets(sets: Sequence[frozenset[str]], others: Sequence[frozenset[str]]) -> set[int]:
    """Positions of `sets` (texts' token sets) that overlap any of `others` above the duplicate
    threshold.

    For the last look inside the write transaction, against memories stored by other requests
    after the import read the store (usually none).
    """
    if not others or not sets:
        return set()
    index = SetIndex([*others, *sets], DUPLICATE_ABOVE)
    for i in range(len(others)):
        index.add(i)
    return {i for i in range(len(sets)) if index.matches(len(others) + i, strict=True)}


def preview(text: str) -> str:
    """The first 80 characters, whitespace collapsed to single spaces."""
    return " ".join(text.split())[:PREVIEW_CHARS].rstrip()
