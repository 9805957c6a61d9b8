"""End-to-end: a large import draws a progress bar on a terminal (a real pseudo-terminal as
stderr) and prints nothing of it on a pipe."""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.harness import proc_env
from e2e.tty import run_with_stderr_on_tty
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Over the daemon's 5,000-chunk threshold for showing a step.
LINES = 5_200


def _big_markdown(path: Path, seed: int) -> None:
    """Bullets of random pseudo-words: no two overlap enough to be near-copies."""
    rng = random.Random(seed)
    words = sorted(
        {"".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(4000)}
    )
    lines = ["# Generated notes"] + ["- " + " ".join(rng.sample(words, 9)) for _ in range(LINES)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_large_import_draws_a_bar_on_a_terminal(hippo: Hippo) -> None:
    hippo.start()
    path = Path(hippo.root) / "big.md"
    _big_markdown(path, seed=1)
    args = ["--timeout", "600", "import", "--markdown", str(path)]
    code, out, text = run_with_stderr_on_tty(args, env=hippo.env, cwd=hippo.root, columns=120, timeout=900)
    assert code == 0, text
    assert out == f"Imported {LINES} of {LINES} (0 duplicates skipped, 0 rejected)\n"
    total = f"{LINES:,}"
    assert re.search(rf"\rchecking for duplicates: +[\d,]+/{total} \[[#-]+\] ", text), text
    assert re.search(rf"\rwriting memories: {total}/{total} \[#+\] +[\d,-]+/s ETA 0:00\x1b\[K", text), text
    assert re.search(r"[\d,]+/s ETA \d+:\d\d", text), text  # a rate and a time left
    # The bar is erased before the reply and its warnings are printed.
    bar, erased, rest = text.rpartition("\r\x1b[K")
    assert erased and "\n" not in bar and "ETA" not in rest


def test_a_large_import_on_a_pipe_prints_no_bar(hippo: Hippo) -> None:
    hippo.start()
    path = Path(hippo.root) / "big.md"
    _big_markdown(path, seed=2)
    done = hippo.ctl("--timeout", "600", "import", "--markdown", str(path), timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Imported {LINES} of {LINES} (0 duplicates skipped, 0 rejected)\n"
    assert "\r" not in done.stderr and "ETA" not in done.stderr and "checking" not in done.stderr


# A small vocabulary makes every chunk a candidate near-copy of many before it: the duplicate
# check of this file runs for minutes, far past the stop below.
SLOW_LINES = 60_000
SLOW_VOCABULARY = 400


def test_a_stop_during_an_import_ends_its_work_and_stores_nothing(hippo: Hippo) -> None:
    os.makedirs(hippo.home, mode=0o700)
    Path(hippo.home, "daemon.json").write_text('{"shutdownGraceSeconds": 0}', encoding="utf-8")
    rng = random.Random(7)
    syllables = [c + v for c in "bcdfgklmnprstvz" for v in "aeiou"]
    words = sorted({"".join(rng.sample(syllables, 3)) for _ in range(SLOW_VOCABULARY)})
    path = Path(hippo.root) / "slow.md"
    lines = ["- " + " ".join(rng.sample(words, 12)) for _ in range(SLOW_LINES)]
    path.write_text("\n".join(["# Notes", *lines]) + "\n", encoding="utf-8")
    hippo.start()
    with hippo.raw(timeout=120) as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=hippo.root, body=m.Import(format="markdown", path=str(path))))
        while not (isinstance(frame := conn.recv(), m.Progress) and frame.line == "checking for duplicates"):
            assert isinstance(frame, m.Progress), frame
        # A file this large is planned in a process of its own, which the stop kills with the import.
        assert _planners(hippo.home)
        assert hippo.stop() == 0
    deadline = time.monotonic() + 10
    while _planners(hippo.home) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _planners(hippo.home)
    hippo.start()
    assert [store["total"] for store in hippo.json("status")["stores"]] == [0]


def _planners(home: str) -> list[int]:
    """The live import planning processes of the daemon on `home` (hippod/ingest/plan_process.py)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()  # empty for a process already dead (a zombie)
        except OSError:
            continue
        if b"hippod.ingest.plan_process" in cmdline and proc_env(int(entry.name)).get("HIPPO_HOME") == home:
            found.append(int(entry.name))
    return found
