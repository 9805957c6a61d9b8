"""The `hippo` fixture: an isolated hippo instance per test (see harness.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pytest

from e2e.harness import Hippo
from e2e.http_support import Api
from e2e.other_user import OtherUser, ensure


@pytest.fixture
def hippo(request: pytest.FixtureRequest) -> Iterator[Hippo]:
    """An isolated hippo instance; every daemon it started (or that a client spawned) dies at teardown.

    Its daemons load the embedding model only in a test marked @pytest.mark.embeddings.
    """
    root = tempfile.mkdtemp(prefix="hp", dir="/tmp")  # short: socket paths are capped near 100 bytes
    embeddings = request.node.get_closest_marker("embeddings") is not None
    if embeddings:
        request.getfixturevalue("model_graph")
    instance = Hippo(root, embeddings=embeddings)
    try:
        yield instance
    finally:
        instance.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgres"])
def api(request: pytest.FixtureRequest, hippo: Hippo) -> Api:
    """The HTTP API of `hippo` over each backend: its daemon on its SQLite store (`hippoctl serve`),
    called as its own user without a key; or a team server over a PostgreSQL database of the test's
    own (`hippod serve --team`), which serves keys alone, called with an admin key of `default`."""
    from team.support import create_key, start_server

    from e2e.http_support import serve

    if request.param == "sqlite":
        return Api(serve(hippo), None)
    url = start_server(hippo, request.getfixturevalue("pg_fresh_dsn"))
    return Api(url, create_key(hippo, "default", role="admin"))


@pytest.fixture
def other_user() -> OtherUser:
    """Another OS user of this machine (hippo-other), whose uid is not the daemon's."""
    return ensure()
