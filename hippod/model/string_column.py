"""Short strings stored a row at a time in one buffer, and the order of rows by their strings.

A sleep keeps the id and the creation time of every memory of its snapshot. As a million Python
strings (and a dict of the times) that is about two hundred megabytes; as UTF-8 in one buffer with
an end offset per row, about forty.

Standard library only: numpy loads when a sleep first asks for an order, as for its pair joins.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# The longest string, in bytes, `order` sorts as fixed-width numpy keys; a row of longer ones (no
# id or timestamp the daemon writes is) would cost rows x width bytes, so they sort in Python.
KEY_BYTES = 128


class StringColumn:
    """Strings, one row each, as UTF-8 in one buffer."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.ends: array[int] = array("q")  # where each row's bytes end in `data`

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, k: int) -> str:
        if k < 0:
            k += len(self.ends)
            if k < 0:
                raise IndexError("StringColumn index out of range")
        end = self.ends[k]  # IndexError past the last row
        return self.data[self.ends[k - 1] if k else 0 : end].decode()

    def __iter__(self) -> Iterator[str]:
        return (self[k] for k in range(len(self)))

    def append(self, value: str) -> None:
        self.data += value.encode()
        self.ends.append(len(self.data))

    def extend(self, other: StringColumn) -> None:
        """Add every row of `other` after this column's."""
        base = len(self.data)
        # Each made whole first: `other` may be this column.
        ends = array("q", (end + base for end in other.ends))
        self.data += bytes(other.data) if other is self else other.data
        self.ends += ends


def order(rows: Sequence[int], *columns: StringColumn) -> array[int]:
    """The rows sorted by their strings in the first column, then the next, as Python sorts tuples
    of str (UTF-8 bytes sort as code points do). An array, not a list: a list of a million numbers
    is a million int objects."""
    import numpy as np  # with the joins that follow (an order this size is a sleep's)

    if not columns:
        return array("q", rows)
    chosen = np.asarray(rows, dtype=np.int64)
    keys = []
    for column in columns:
        key = _fixed(column, chosen)
        if key is None:
            return array("q", sorted(rows, key=lambda k: tuple(each[k] for each in columns)))
        keys.append(key)
    # lexsort sorts by its last key first; it is stable, and the rows are taken in the order given.
    ordered = array("q")
    ordered.frombytes(chosen[np.lexsort(keys[::-1])].data.cast("B"))
    return ordered


def _fixed(column: StringColumn, chosen: npt.NDArray[np.int64]) -> npt.NDArray[np.bytes_] | None:
    """The rows' strings as a numpy array of fixed-width bytes (which compare as the strings do), or
    None where they cannot: a string longer than KEY_BYTES, or one holding a NUL byte (numpy's
    bytes drop trailing NULs, so "a" and "a\\0" would compare equal)."""
    import numpy as np

    ends = np.frombuffer(column.ends, dtype=np.int64)
    # Only the chosen rows' offsets: a tenant's order on a large store costs what its own rows do.
    starts = np.zeros(len(chosen), dtype=np.int64)
    later = chosen > 0
    starts[later] = ends[chosen[later] - 1]
    lengths = ends[chosen] - starts
    width = int(lengths.max(initial=0))
    if width > KEY_BYTES:
        return None
    data = np.frombuffer(column.data, dtype=np.uint8)
    keys = np.zeros((len(chosen), max(width, 1)), dtype=np.uint8)
    # A byte position at a time: memory in proportion to the rows, not to the rows' bytes.
    for at in range(width):
        has = lengths > at
        keys[has, at] = data[starts[has] + at]
        if not keys[has, at].all():
            return None
    return keys.view(f"S{max(width, 1)}").ravel()
