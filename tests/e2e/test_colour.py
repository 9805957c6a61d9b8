"""Colours appear on a terminal only, and never with NO_COLOR: the real client on a real pseudo-terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from e2e.tty import run_on_tty

if TYPE_CHECKING:
    from e2e.harness import Hippo

ESC = "\x1b["


def test_doctor_and_errors_are_coloured_on_a_terminal(hippo: Hippo) -> None:
    hippo.start()
    env = {k: v for k, v in hippo.env.items() if k != "NO_COLOR"}
    _, shown = run_on_tty(["doctor"], env=dict(env, TERM="xterm"), cwd=hippo.root)
    assert ESC + "32mok" in shown, shown
    code, shown = run_on_tty(["recal", "deploy"], env=dict(env, TERM="xterm"), cwd=hippo.root)
    assert code == 2 and f"hippoctl: {ESC}31merror:{ESC}0m " in shown, shown


def test_no_color_or_a_dumb_terminal_turns_colour_off(hippo: Hippo) -> None:
    hippo.start()
    for extra in ({"NO_COLOR": "1"}, {"NO_COLOR": "yes", "FORCE_COLOR": "1"}, {"TERM": "dumb"}):
        env = {**hippo.env, "TERM": "xterm", **extra}
        _, shown = run_on_tty(["doctor"], env=env, cwd=hippo.root)
        assert "ok  " in shown and ESC not in shown, (extra, shown)
        code, shown = run_on_tty(["recal", "deploy"], env=env, cwd=hippo.root)
        assert code == 2 and "hippoctl: error: " in shown and ESC not in shown, (extra, shown)


def test_a_pipe_gets_no_colour(hippo: Hippo) -> None:
    hippo.start()
    env = {k: v for k, v in hippo.env.items() if k != "NO_COLOR"}
    done = hippo.ctl("doctor", env=dict(env, TERM="xterm", FORCE_COLOR="1"))
    assert "ok  " in done.stdout and ESC not in done.stdout + done.stderr
    done = hippo.ctl("recal", "deploy", env=dict(env, TERM="xterm"))
    assert done.returncode == 2 and ESC not in done.stderr
