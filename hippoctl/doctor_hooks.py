"""`doctor`'s Hook commands check, and the Blocks check's commands: run every installed hook command
the way its host does, and the commands of a project's hippo blocks the daemon hands over (only
hippod's own, word for word under this client's path: agent_checks.block_commands) the way an
agent's shell does, and fail each one that cannot start (integrations.md §12).

A host runs a hook as `/bin/sh -c <command>` with its own PATH, often without the folder this client
lives in, and writes the event's JSON to stdin. Doctor does the same with `PATH=/usr/bin:/bin` and an
empty stdin, running the exact installed string, so a bare `hippoctl` fails here as it fails in the
host (exit 127, `hippoctl: not found`).

Doctor is read-only, and a started hook verb acts on what it is given (an empty `session-end` still
runs a sleep, `last-sleep` hands out the kept report, the per-prompt hook writes the token ledger), so
each command runs sealed off from the user's daemon and stores: `HIPPO_SOCKET` names a socket nobody
listens on, `HIPPO_HOME` a scratch folder (where a hook verb spools what it could not deliver), and
`HIPPO_NO_SPAWN=1` keeps it from starting a daemon; the folder is deleted afterwards. The seal sits
outside the program, so it holds for whatever the command starts, an older hippoctl included.
Everything that decides whether a command starts (the shell finding the program, its interpreter,
the imports, the arguments) happens before it reaches for the socket, so nothing of the check is lost.

An agent runs a block's commands (`context --auto`, `remember ... --error`) in its shell tool, which
is `/bin/sh -c` with a PATH as bare as a host's. They are no hook verbs: out of the daemon's reach
they exit 3 (UNREACHABLE), which under the seal means they got as far as asking the daemon, so that
counts as starting for them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hippoctl.protocol.errors import UNREACHABLE
from hippoctl.protocol.replies_doctor import FAIL, OK, Check, HookCommand
from hippoctl.protocol.wording import plural

NAME = "Hook commands"
BLOCKS = "Blocks"
SHELL = "/bin/sh"
BARE_PATH = "/usr/bin:/bin"
# Far above any start-up time: a command that runs this long is stuck, not slow.
RUN_TIMEOUT = 60.0
_WORKERS = 4
_CANNOT_START = (126, 127)  # sh: found but not executable; not found


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one command ended: its exit code (None when it did not finish), and when it failed, what
    went wrong (`cannot start`, ...) and the detail that says why."""

    code: int | None
    problem: str | None = None
    detail: str = ""


def sealed_env(base: Mapping[str, str], scratch: str) -> dict[str, str]:
    """`base` as a host passes it, with the bare PATH, and the daemon and stores out of reach."""
    env = dict(base)
    env.update(
        PATH=BARE_PATH,
        HIPPO_HOME=scratch,
        HIPPO_SOCKET=os.path.join(scratch, "nobody.sock"),
        HIPPO_NO_SPAWN="1",
    )
    return env


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_one(command: str, *, env: Mapping[str, str], cwd: str, timeout: float = RUN_TIMEOUT) -> Outcome:
    """Run `command` through /bin/sh with an empty stdin; a problem when it exits non-zero or its
    shell reports something not found."""
    try:
        done = subprocess.run(
            [SHELL, "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=dict(env),
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(None, "does not finish", f"stopped after {timeout:g} s")
    except OSError as exc:
        return Outcome(None, "cannot start", f"{SHELL}: {exc.strerror or exc}")
    err = done.stderr.decode("utf-8", errors="replace")
    said = _last_line(err) or "no message"
    if done.returncode in _CANNOT_START:
        return Outcome(done.returncode, "cannot start", f"exit {done.returncode}: {said}")
    if done.returncode != 0:
        return Outcome(done.returncode, "fails", f"exit {done.returncode}: {said}")
    if "not found" in err.lower():
        return Outcome(0, "cannot start all of it", said)
    return Outcome(0)


def run_all(commands: Sequence[str], *, env: Mapping[str, str], cwd: str) -> dict[str, Outcome]:
    """Each distinct command, a few at a time, sealed (see the module docstring)."""
    distinct = list(dict.fromkeys(commands))
    scratch = tempfile.mkdtemp(prefix="hippo-doctor-")
    try:
        sealed = sealed_env(env, scratch)
        with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
            outcomes = pool.map(lambda c: run_one(c, env=sealed, cwd=cwd), distinct)
            return dict(zip(distinct, outcomes, strict=True))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _failures(
    name: str, commands: Sequence[HookCommand], env: Mapping[str, str] | None, cwd: str, *, in_block: bool
) -> list[Check]:
    """Run the commands; a failed check per command that does not start. A block's command is shown
    in backquotes, as the block has it, and its exit 3 counts as started (the module docstring)."""
    outcomes = run_all([c.command for c in commands], env=os.environ if env is None else env, cwd=cwd)
    failed = []
    for c in commands:
        outcome = outcomes[c.command]
        if outcome.problem is None or (in_block and outcome.code == UNREACHABLE):
            continue
        shown = f"`{c.command}`" if in_block else c.command
        message = f"{c.entry}: {shown} {outcome.problem} with PATH={BARE_PATH} ({outcome.detail})"
        failed.append(Check(name, FAIL, message, c.fix))
    return failed


def checks(commands: Sequence[HookCommand], *, cwd: str, env: Mapping[str, str] | None = None) -> list[Check]:
    """One failed check per entry whose command cannot start from a bare PATH, else one ok check."""
    if not commands:
        return [Check(NAME, OK, "no hook commands of hippod's are installed")]
    if sys.platform == "win32":
        return [Check(NAME, OK, f"{len(commands)} installed; not run here (hosts on Windows use no /bin/sh)")]
    failed = _failures(NAME, commands, env, cwd, in_block=False)
    if failed:
        return failed
    started = "the 1 command starts" if len(commands) == 1 else f"all {len(commands)} commands start"
    return [Check(NAME, OK, f"{started} with PATH={BARE_PATH}, as their hosts run them")]


def block_checks(
    commands: Sequence[HookCommand], *, cwd: str, env: Mapping[str, str] | None = None
) -> list[Check]:
    """The Blocks check of the hippo blocks' commands: one failed check per command an agent's
    shell cannot start, else one ok check; nothing when no block holds a command of hippoctl's."""
    if not commands:
        return []
    if sys.platform == "win32":
        return [Check(BLOCKS, OK, f"{plural(len(commands), 'block command')}; not run here (no /bin/sh)")]
    failed = _failures(BLOCKS, commands, env, cwd, in_block=True)
    if failed:
        return failed
    started = "the 1 command" if len(commands) == 1 else f"all {len(commands)} commands"
    message = f"{started} of the hippo blocks start with PATH={BARE_PATH}, as agents run them"
    return [Check(BLOCKS, OK, message)]
