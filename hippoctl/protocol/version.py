"""Protocol numbers, kept apart from the package version."""

PROTOCOL = 1
MIN_PROTOCOL = 1


def spoken(low: int, high: int) -> str:
    """The protocols a daemon speaks, in words: `protocol 1`, or `protocols 1 to 2` for a range."""
    return f"protocol {high}" if low == high else f"protocols {low} to {high}"
