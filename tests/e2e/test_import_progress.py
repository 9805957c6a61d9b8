"""End-to-end: a large import draws a progress bar on a terminal (a real pseudo-terminal as
stderr) and prints nothing of it on a pipe."""

from __future__ import annotations

import fcntl
import os
import pty
import random
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import TYPE_CHECKING

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


def _drain(fd: int, into: bytearray) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the last holder of the terminal's other side has closed it
            return
        if not data:
            return
        into.extend(data)


def test_a_large_import_draws_a_bar_on_a_terminal(hippo: Hippo) -> None:
    hippo.start()
    path = Path(hippo.root) / "big.md"
    _big_markdown(path, seed=1)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = bytearray()
    reader = threading.Thread(target=_drain, args=(master, screen))
    reader.start()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "--timeout", "600", "import", "--markdown", str(path)],
            cwd=hippo.root,
            env=hippo.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
        )
        os.close(slave)
        out, _ = proc.communicate(timeout=900)
    finally:
        reader.join(timeout=60)
        os.close(master)
    assert proc.returncode == 0, screen.decode(errors="replace")
    assert out.decode() == f"Imported {LINES} of {LINES} (0 duplicates skipped, 0 rejected)\n"
    text = screen.decode()
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
