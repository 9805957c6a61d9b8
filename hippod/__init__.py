"""hippod: the per-user memory daemon."""

from hippoctl import __version__

__all__ = ["__version__"]
