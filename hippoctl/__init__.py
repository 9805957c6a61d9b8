"""hippoctl: the thin client for the hippod memory daemon."""

__version__ = "0.1.0"
