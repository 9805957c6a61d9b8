"""The package version: one release ships the client and the daemon together."""

__version__ = "0.1.0"
