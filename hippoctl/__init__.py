"""hippoctl: the thin client for the hippod memory daemon."""

from hippoctl.protocol.package import __version__

__all__ = ["__version__"]
