"""Running the service manager's commands (systemctl, launchctl, schtasks) for the service installer
and for the questions doctor, init and setup ask it."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from hippoctl.protocol.replies_service import ServiceCommand
from hippod.base import subprocesses

# A service manager that has not answered by then is not going to (e.g. a hung user bus).
COMMAND_TIMEOUT = 15.0
# What systemctl says when there is no user bus to reach systemd --user through (a session started
# by su or sudo, a container, ssh without a login session): systemd's wording, then older versions'.
_NO_BUS = ("Failed to connect to bus", "Failed to get D-Bus connection")
# systemctl verbs that need the running manager; enable and disable also work on the unit files alone.
_NEEDS_MANAGER = frozenset({"daemon-reload", "start", "stop", "restart"})


def show(argv: list[str]) -> str:
    """A command as the user would type it."""
    return shlex.join(argv)


def _lines(output: bytes) -> list[str]:
    return [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]


async def ask(
    argv: list[str], env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT
) -> tuple[ServiceCommand, list[str]]:
    """Run one command to completion (or the timeout): how it went, and the lines it printed on stdout.

    A failure is reported in the command's `detail` (its last line on stderr, else on stdout), never raised.
    """
    try:
        done = await subprocesses.run(argv, timeout=timeout, env=env)
    except FileNotFoundError:
        return ServiceCommand(command=argv, ok=False, detail=f"{argv[0]} not found"), []
    except OSError as exc:
        return ServiceCommand(command=argv, ok=False, detail=exc.strerror or str(exc)), []
    except TimeoutError:
        return ServiceCommand(command=argv, ok=False, detail=f"no answer within {timeout:g} s"), []
    out = _lines(done.out)
    if done.returncode == 0:
        return ServiceCommand(command=argv, ok=True), out
    detail = next(iter(_lines(done.err)[-1:] or out[-1:]), f"exit status {done.returncode}")
    return ServiceCommand(command=argv, ok=False, detail=detail), out


async def run(argv: list[str], env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT) -> ServiceCommand:
    """Run one command to completion (or the timeout); a failure is reported, never raised."""
    return (await ask(argv, env, timeout))[0]


def unreachable(command: ServiceCommand) -> bool:
    """Whether a systemctl command failed because systemd --user cannot be reached at all."""
    return not command.ok and any(sign in (command.detail or "") for sign in _NO_BUS)


async def run_all(commands: list[list[str]], env: Mapping[str, str]) -> list[ServiceCommand]:
    """Run commands in order, stopping at the first failure: the rest would fail the same way."""
    done: list[ServiceCommand] = []
    for argv in commands:
        result = await run(argv, env)
        done.append(result)
        if not result.ok:
            break
    return done


def _on_files(argv: list[str]) -> list[str] | None:
    """The part of a systemctl command that needs no running manager: enable or disable without
    --now (systemctl then only links or unlinks the unit); None for what needs the manager."""
    words = [w for w in argv if w not in ("--now", "--no-block")]
    verb = next((w for w in words[1:] if not w.startswith("-")), "")
    return None if verb in _NEEDS_MANAGER else words


async def run_systemctl(commands: list[list[str]], env: Mapping[str, str]) -> list[ServiceCommand]:
    """run_all for systemctl, going on when the manager cannot be reached: the remaining enable and
    disable steps then run on the unit files alone, so the change takes effect at the next login."""
    done = await run_all(commands, env)
    if not done or not unreachable(done[-1]):
        return done
    rest = [words for argv in commands[len(done) - 1 :] if (words := _on_files(argv)) is not None]
    return done + await run_all(rest, env)
