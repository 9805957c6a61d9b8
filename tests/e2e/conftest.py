"""The `hippo` fixture: an isolated hippo instance per test (see harness.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pytest

from e2e.harness import Hippo


@pytest.fixture
def hippo(request: pytest.FixtureRequest) -> Iterator[Hippo]:
    """An isolated hippo instance; every daemon it started (or that a client spawned) dies at teardown.

    Its daemons load the embedding model only in a test marked @pytest.mark.embeddings.
    """
    root = tempfile.mkdtemp(prefix="hp", dir="/tmp")  # short: socket paths are capped near 100 bytes
    instance = Hippo(root, embeddings=request.node.get_closest_marker("embeddings") is not None)
    try:
        yield instance
    finally:
        instance.cleanup()
        shutil.rmtree(root, ignore_errors=True)
