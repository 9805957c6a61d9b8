"""Running the service manager's commands (systemctl, launchctl, schtasks) for the service installer."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from hippoctl.protocol.replies_service import ServiceCommand
from hippod import subprocesses

# A service manager that has not answered by then is not going to (e.g. a hung user bus).
COMMAND_TIMEOUT = 15.0


def show(argv: list[str]) -> str:
    """A command as the user would type it."""
    return shlex.join(argv)


def _last_line(*outputs: bytes) -> str | None:
    for output in outputs:
        lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return None


async def run(argv: list[str], env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT) -> ServiceCommand:
    """Run one command to completion (or the timeout); a failure is reported, never raised."""
    try:
        done = await subprocesses.run(argv, timeout=timeout, env=env)
    except FileNotFoundError:
        return ServiceCommand(command=argv, ok=False, detail=f"{argv[0]} not found")
    except OSError as exc:
        return ServiceCommand(command=argv, ok=False, detail=exc.strerror or str(exc))
    except TimeoutError:
        return ServiceCommand(command=argv, ok=False, detail=f"no answer within {timeout:g} s")
    if done.returncode == 0:
        return ServiceCommand(command=argv, ok=True)
    detail = _last_line(done.err, done.out) or f"exit status {done.returncode}"
    return ServiceCommand(command=argv, ok=False, detail=detail)


async def run_all(
    commands: list[list[str]], env: Mapping[str, str], warnings: list[str]
) -> list[ServiceCommand]:
    """Run commands in order, stopping at the first failure: the rest would fail the same way.

    The failure becomes one warning naming the command, why it failed, and what was left undone.
    """
    done: list[ServiceCommand] = []
    for index, argv in enumerate(commands):
        result = await run(argv, env)
        done.append(result)
        if not result.ok:
            warning = f"`{show(argv)}` failed: {result.detail}"
            rest = commands[index + 1 :]
            if rest:
                warning += "; not run: " + ", ".join(f"`{show(r)}`" for r in rest)
            warnings.append(warning)
            break
    return done
