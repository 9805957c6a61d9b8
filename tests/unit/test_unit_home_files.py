"""The files a daemon keeps in its home are an interface on disk: a daemon of one version and a client
or daemon of the next find each other by these names, so they never change."""

from __future__ import annotations

import os

from hippoctl.protocol import instance


def test_the_home_lock_and_record_keep_their_names(tmp_path: os.PathLike[str]) -> None:
    home = str(tmp_path)
    assert instance.lock_path(home) == os.path.join(home, "hippod.lock")
    assert instance.record_path(home) == os.path.join(home, "hippod-running.json")
