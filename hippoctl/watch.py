"""`watch "<command>"`: run a command through the shell; report its failure to the daemon (ingest.md §6).

The command runs here, in the client, so `hippoctl watch` always exits with the command's own code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO

from hippoctl.client import ClientError, call, request_envelope
from hippoctl.protocol import messages as m

# Of each stream the daemon gets the first and the last 16 KiB: a runner's error tends to come
# first (a stack trace) or last (a summary, npm's own lines), and the daemon picks the lines that
# matter (hippod/ingest/failure_output.py).
KEEP_BYTES = 16 * 1024
REPORT_TIMEOUT = 30.0


def shell_argv(command: str) -> list[str]:
    """The user's shell running `command`: `/bin/sh -c`, or `cmd /c` on Windows."""
    return ["cmd", "/c", command] if os.name == "nt" else ["/bin/sh", "-c", command]


class _Pump(threading.Thread):
    """Copies one pipe to the user's stream as it arrives, keeping its first and last bytes."""

    def __init__(self, source: IO[bytes], sink: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.source, self.sink = source, sink
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := os.read(self.source.fileno(), 65536):
            self.total += len(chunk)
            try:
                self.sink.write(chunk)
                self.sink.flush()
            except (OSError, ValueError):
                pass  # the user's terminal went away; keep draining so the command is not blocked
            room = KEEP_BYTES - len(self.head)
            self.head += chunk[:room]
            if len(chunk) > room:
                self.tail = (self.tail + chunk[max(0, room) :])[-KEEP_BYTES:]

    def text(self) -> str:
        """The first and last 16 KiB as text, with a line `…` between them when some was left out."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        if not self.tail:
            return head
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        cut = self.total > len(self.head) + len(self.tail)
        return f"{head}\n…\n{tail}" if cut else head + tail


def _exit_code(returncode: int) -> int:
    # A command killed by a signal exits like the shell reports it: 128 + the signal number.
    return 128 - returncode if returncode < 0 else returncode


def run_command(command: str, *, cwd: str) -> tuple[int, str, str]:
    """Run the command with its output streamed live: (exit code, stderr, stdout as kept)."""
    try:
        proc = subprocess.Popen(shell_argv(command), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        # No shell to run it with: report it as the shell would a command it cannot run.
        message = f"cannot run {shell_argv(command)[0]}: {exc.strerror or exc}"
        print(f"hippoctl: {message}", file=sys.stderr)
        return 127, message, ""
    assert proc.stdout is not None and proc.stderr is not None
    out = _Pump(proc.stdout, sys.stdout.buffer)
    err = _Pump(proc.stderr, sys.stderr.buffer)
    out.start()
    err.start()
    while True:
        try:
            proc.wait()
            break
        except KeyboardInterrupt:
            continue  # Ctrl-C reached the command too; its exit code is the one to report
    out.join()
    err.join()
    return _exit_code(proc.returncode), err.text(), out.text()


def run(command: str, *, cwd: str, global_store: bool, spawn: bool) -> int:
    """Run `command`, stream its output, send a WatchFailure when it fails; returns its exit code."""
    code, stderr, stdout = run_command(command, cwd=cwd)
    if code == 0:
        return 0
    body = m.WatchFailure(command=command, exit_code=code, output=stderr, stdout=stdout)
    try:
        reply = call(
            request_envelope(body, cwd=cwd, global_store=global_store), spawn=spawn, timeout=REPORT_TIMEOUT
        )
    except ClientError as exc:
        print(f"hippoctl: warning: the failure was not recorded ({exc})", file=sys.stderr)
        return code
    if isinstance(reply, m.Error):
        print(f"hippoctl: warning: the failure was not recorded ({reply.message})", file=sys.stderr)
    elif reply.text:
        print(f"hippoctl: {reply.text}", file=sys.stderr)
    return code
