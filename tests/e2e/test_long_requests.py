"""End-to-end: a long request keeps talking. A sleep whose planning runs far longer than the
client's `--timeout` (a limit on silence) succeeds, because the daemon sends a heartbeat frame
every second through every phase; a request that succeeded is never reported as failed."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from e2e.sleep_support import make, plant, project, query
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Memories over a small vocabulary: every pair shares words, so planning (near-copies, conflicts)
# takes several seconds (5 at 30,000 on a quiet machine), past the client's limit of 4 s of silence.
MEMORIES = 40_000
VOCABULARY = 400
WORDS_EACH = 12


def _busy_store(hippo: Hippo) -> tuple[str, str]:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    rng = random.Random(7)
    syllables = [c + v for c in "bcdfgklmnprstvz" for v in "aeiou"]
    words = sorted({"".join(rng.sample(syllables, 3)) for _ in range(VOCABULARY)})
    plant(db, [make(" ".join(rng.sample(words, WORDS_EACH))) for _ in range(MEMORIES)])
    return folder, db


@pytest.mark.long
def test_a_sleep_longer_than_the_client_timeout_succeeds(hippo: Hippo) -> None:
    folder, db = _busy_store(hippo)
    hippo.start()
    with hippo.raw(timeout=600) as conn:
        # A second client of the same sleep, on a raw socket, sees the frames behind the first.
        conn.hello()
        conn.send(m.Request(id=1, cwd=folder, body=m.Sleep(no_share=True)))
        done = hippo.ctl("--timeout", "4", "sleep", "--no-share", cwd=folder, timeout=900)
        frames = []
        while isinstance(message := conn.recv(), m.Progress):
            frames.append(message)
    assert done.returncode == 0, done.stderr
    assert "stopped answering" not in done.stderr
    assert done.stdout.strip(), done.stdout
    assert isinstance(message, m.Result) and message.exit_code == 0, message
    # Heartbeats: empty lines, which the client does not print.
    assert any(frame.line == "" for frame in frames), frames
    assert query(db, "SELECT count(*) FROM consolidation_runs")[0][0] >= 1
