"""A store that cannot be opened for want of files leaves nothing behind: each aiosqlite connection
has a thread of its own, and one left open would keep the daemon from ever exiting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Opens stores with 0 to 15 files to spare (out of files at each step of the opening), then names the
# connection threads still alive; os._exit, as a leaked thread would hang a normal exit.
_SCRIPT = """
import asyncio, json, os, sys, threading, time
from hippod.store.sqlite.db import Database

async def main(folder):
    for spare in range(16):
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        for fd in held[:spare]:
            os.close(fd)
        try:
            db, _ = await Database.open(os.path.join(folder, f"s{spare}.db"))
        except Exception:
            db = None
        finally:
            for fd in held[spare:]:
                os.close(fd)
        if db is not None:
            await db.close()
    # A closed connection's thread ends just after its close is answered; a leaked one never does.
    workers = [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]
    deadline = time.monotonic() + 20
    for thread in workers:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in workers if t.is_alive()]
    print(json.dumps(alive), flush=True)
    os._exit(0)

asyncio.run(main(sys.argv[1]))
"""


def test_a_store_opened_out_of_files_leaves_no_connection_thread(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
