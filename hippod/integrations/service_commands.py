"""Running the service manager's commands (systemctl, launchctl, schtasks) for the service installer."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import subprocess
import sys
from collections.abc import Mapping

from hippoctl.protocol.replies_service import ServiceCommand

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
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        # The daemon runs under pythonw: a console program would flash a window.
        kwargs["creationflags"] = subprocess.CREATE_NO_WINDOW
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            **kwargs,  # type: ignore[arg-type]
        )
    except FileNotFoundError:
        return ServiceCommand(command=argv, ok=False, detail=f"{argv[0]} not found")
    except OSError as exc:
        return ServiceCommand(command=argv, ok=False, detail=exc.strerror or str(exc))
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return ServiceCommand(command=argv, ok=False, detail=f"no answer within {timeout:g} s")
    if proc.returncode == 0:
        return ServiceCommand(command=argv, ok=True)
    detail = _last_line(err, out) or f"exit status {proc.returncode}"
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
