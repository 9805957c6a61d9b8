"""How the daemon's cyclic garbage collector runs (bench/RESULTS.md, "Recall against its floor").

The daemon frees almost all of its objects by reference counting: a recall makes a few thousand
lists, dicts and records and drops them all before it replies. With Python's default threshold (a
young collection every 700 more container allocations than frees) several collections run inside
every recall anyway, scanning the objects the recall is still using and promoting them to the older
generations, whose collections then scan the whole heap. A higher threshold lets a request's objects
die before a collection looks at them; freezing what startup made (modules, classes, config) keeps
it out of every later full collection. Cycles are still found: the threshold is reached by objects
that are not freed, and those are what the collector is for. A handler's module imported later, by
the first request of its verb (daemon/dispatch.py), is not frozen: a few thousand objects for each
full collection to look at, under a millisecond.
"""

from __future__ import annotations

import gc

# Young-generation threshold: well above what one request holds at once (a recall over three
# stores: about 6 containers per candidate, 200 candidates per store), so it counts only what
# requests leave behind.
YOUNG_THRESHOLD = 10_000


def tune() -> None:
    """Collect once, freeze the survivors (they live as long as the daemon), and raise the young
    generation's threshold; the older generations keep their default ratios."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
