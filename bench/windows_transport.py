"""The local transport's round trip and the client's start-up: Unix socket on Linux, named pipe on
Windows (under Wine, so the ratio between them is indicative, not a Windows figure).

    python bench/windows_transport.py [--requests 2000] [--starts 15]

For each platform it starts a daemon on a fresh home, then, in a process of that platform's
interpreter, sends Hello and Ping on a new connection `--requests` times (the round trip a hook
pays, connection included) and times it; and it times `--starts` whole `hippoctl recall` processes
against `python -c "import msgspec"` started the same way. The Windows side needs the interpreter
`python tests/windows/wine.py` builds under .wine/ (run it once first).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WINE_PYTHON = REPO / ".wine" / "python" / "python.exe"
WINE_PREFIX = REPO / ".wine" / "prefix"

INNER = """
import json, os, sys, time
import msgspec
from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.client import connect
from hippoctl.protocol.paths import home_override
from hippoctl.protocol.version import PROTOCOL

hello = pack(msgspec.msgpack.encode(m.Hello(protocol=PROTOCOL, client_version="bench", pid=os.getpid(),
                                            home=home_override() or "")))
ping = pack(msgspec.msgpack.encode(m.Request(id=1, cwd=os.getcwd(), body=m.Ping())))
times = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    conn = connect(spawn=False)  # with the client's checks: the socket's folders, or the pipe server's SID
    conn.settimeout(10.0)
    conn.sendall(hello + ping)
    recv_frame(conn)  # Welcome
    recv_frame(conn)  # Result
    conn.close()
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """This interpreter with `args`; its output through pipes (under Wine a regular file cannot be
    a process's standard output)."""
    return subprocess.run(
        [sys.executable, *args], env=env, stdin=subprocess.PIPE, capture_output=True, text=True, check=False
    )


def _starts(env: dict[str, str], argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = _run(*argv, env=env)
        times.append(time.perf_counter() - start)
        assert done.returncode == 0, done.stderr
    return times


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1e3 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(name: str, requests: int, starts: int) -> dict[str, object]:
    """The figures on this interpreter's platform, with a daemon of a fresh home it starts and stops."""
    folder = tempfile.mkdtemp(prefix="hippo-transport-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "PYTHONDONTWRITE"))}
    env.update(HIPPO_HOME=folder, HIPPO_EMBEDDINGS="off")
    try:
        done = _run("-m", "hippoctl", "remember", "the bench warms the daemon first", env=env)
        assert done.returncode == 0, done.stderr
        done = _run("-c", INNER, str(requests), env=env)
        assert done.returncode == 0, done.stderr
        trips = json.loads(done.stdout)
        client = _starts(env, ["-m", "hippoctl", "recall", "bench warms"], starts)
        msgspec_only = _starts(env, ["-c", "import msgspec"], starts)
    finally:
        _run("-m", "hippoctl", "daemon", "stop", env=env)
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "platform": name,
        "trip_p50": _ms(trips, 0.5),
        "trip_p99": _ms(trips, 0.99),
        "trip_mean": 1e3 * statistics.fmean(trips),
        "client_p50": _ms(client, 0.5),
        "msgspec_p50": _ms(msgspec_only, 0.5),
    }


def _under_wine(requests: int, starts: int) -> dict[str, object]:
    """The same measurement, run by the Windows interpreter under Wine."""
    if not WINE_PYTHON.exists():
        raise SystemExit("bench: no Windows interpreter; run `python tests/windows/wine.py` first")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "PYTHON"))}
    env.update(WINEPREFIX=str(WINE_PREFIX), WINEDEBUG="-all")
    argv = ["wine", str(WINE_PYTHON), "bench/windows_transport.py", "--here", "--requests", str(requests)]
    done = subprocess.run(
        [*argv, "--starts", str(starts)],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--starts", type=int, default=15)
    parser.add_argument("--no-wine", action="store_true", help="measure Linux only")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)  # one JSON row, this platform
    args = parser.parse_args()
    if args.here:
        print(json.dumps(measure("Windows under Wine, named pipe", args.requests, args.starts)))
        return 0
    rows = [measure("Linux, Unix socket", args.requests, args.starts)]
    if not args.no_wine:
        rows.append(_under_wine(args.requests, args.starts))
    print(f"{args.requests} connections with Hello+Ping each; {args.starts} whole processes each")
    print()
    print(
        "| platform | round trip p50 (ms) | p99 (ms) | mean (ms) | `hippoctl recall` p50 (ms) "
        "| `python -c 'import msgspec'` p50 (ms) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['platform']} | {r['trip_p50']:.3f} | {r['trip_p99']:.3f} | {r['trip_mean']:.3f} "
            f"| {r['client_p50']:.0f} | {r['msgspec_p50']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
