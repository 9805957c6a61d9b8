"""Protocol numbers, kept apart from the package version."""

PROTOCOL = 1
MIN_PROTOCOL = 1
