"""A project's memories stay in that project: two projects under one HOME, the hooks `init` installs
run as Claude Code runs them (`/bin/sh -c`, PATH=/usr/bin:/bin, no XDG_RUNTIME_DIR), several session
ends in one (each ends in a sleep, whose auto-share copies lessons to the global store), then the
other's per-prompt hook and `context` show none of the first's project-specific memories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import query
from e2e.transcripts import claude_records, write_jsonl

if TYPE_CHECKING:
    from e2e.harness import Hippo

WAIT = 60.0
PNPM = "We decided to always use pnpm instead of npm in this repo."
BROKEN = "Build breaks when web/src/checkout.ts imports lodash directly; import lodash-es instead"
LESSON = "PowerShell reads scripts as UTF-16 unless they carry a BOM; save as utf-8-sig"
SESSIONS = 4


class Host:
    """Runs the commands `init` wrote to ~/.claude/settings.json as Claude Code runs them."""

    def __init__(self, hippo: Hippo) -> None:
        settings = json.loads(Path(hippo.user_home, ".claude", "settings.json").read_text())
        self.commands = {
            event: entry["hooks"][0]["command"]
            for event, entries in settings["hooks"].items()
            for entry in entries
            if entry.get("matcher") is None
        }
        env = {k: v for k, v in hippo.env.items() if k != "XDG_RUNTIME_DIR"}
        self.env = {**env, "PATH": "/usr/bin:/bin"}

    def run(self, event: str, cwd: str, payload: dict[str, Any]) -> str:
        done = subprocess.run(
            ["/bin/sh", "-c", self.commands[event]],
            cwd=cwd,
            env=self.env,
            input=json.dumps({**payload, "cwd": cwd, "hook_event_name": event}),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, ""), (event, done)
        return done.stdout


def folder(hippo: Hippo, name: str) -> str:
    path = os.path.join(hippo.user_home, "proj", name)
    os.makedirs(path)
    Path(path, "package.json").write_text(json.dumps({"name": f"{name}-shop"}))
    Path(path, "CLAUDE.md").write_text(f"# {name}\n")
    os.makedirs(os.path.join(path, "web"))
    hippo.ok("init", "--no-learn", "--no-schedule", cwd=path)
    return path


def test_only_lessons_that_name_nothing_of_their_project_reach_another(hippo: Hippo) -> None:
    os.makedirs(os.path.join(hippo.user_home, ".claude"))
    hippo.start()
    demo = folder(hippo, "demo")
    host = Host(hippo)
    hippo.ok("remember", BROKEN, "--error", cwd=demo)
    hippo.ok("remember", LESSON, "--error", cwd=demo)
    db = os.path.join(demo, ".hippo", "hippo.db")
    for n in range(SESSIONS):
        session = f"5f0c7a8e-0000-4000-8000-00000000000{n}"
        said = [PNPM] if n == 0 else ["Done."]
        transcript = write_jsonl(
            Path(hippo.user_home, ".claude", "projects", "-demo", f"{session}.jsonl"),
            claude_records(["Set up the build"], said),
        )
        payload = {"session_id": session, "transcript_path": str(transcript), "reason": "prompt_input_exit"}
        assert host.run("SessionEnd", demo, payload) == ""
        assert hippo.wait_for(
            lambda n=n: query(db, "SELECT count(*) FROM consolidation_runs") == [(n + 1,)], WAIT
        )
    # The replays of four sleeps are no retrievals: nothing in demo was handed out.
    assert query(db, "SELECT DISTINCT retrieval_count FROM memories") == [(0,)]
    copies = query(hippo.db, "SELECT content, origin_project, source FROM memories")
    assert [(c, o) for c, o, _ in copies] == [(LESSON, "demo")] and copies[0][2].startswith(
        "auto-shared:demo:"
    )
    other = folder(hippo, "other")
    prompt = {"session_id": "other-session", "prompt": "how do I install the dependencies?"}
    hook = json.loads(host.run("UserPromptSubmit", other, prompt))
    shown = hook["hookSpecificOutput"]["additionalContext"]
    context = hippo.ok("context", cwd=other).stdout
    for text in (shown, context):
        assert "pnpm" not in text and "checkout.ts" not in text
        assert LESSON in text


def test_forget_and_reject_in_the_project_say_what_became_of_the_global_copy(hippo: Hippo) -> None:
    hippo.start()
    demo = folder(hippo, "demo")
    auto = hippo.json("remember", LESSON, "--error", cwd=demo)["id"]
    by_hand = hippo.json("remember", "Prefer rg over grep when searching code", cwd=demo)["id"]
    wrong = hippo.json("remember", "Python 3.8 supports match statements", cwd=demo)["id"]
    summary = hippo.ok("sleep", cwd=demo).stdout.splitlines()
    [(auto_copy,)] = query(hippo.db, "SELECT id FROM memories")
    assert summary[-3:] == [
        "Shared 1 lesson with the global store, where every project's recall, context and prompt hook "
        "can show it:",
        f'  - "{LESSON}" as {auto_copy}',
        '  (`hippoctl forget <g_id>` takes a copy back; "autoShareOnSleep": false in the project\'s '
        ".hippo/config.json turns auto-share off)",
    ]
    inspected = hippo.ok("inspect", auto_copy, cwd=demo).stdout
    assert "origin_project: demo (copied from that project: every project's reads show it)" in inspected
    assert "origin_project: demo (this project's own)" in hippo.ok("inspect", auto, cwd=demo).stdout
    hand_copy = hippo.json("promote", by_hand, cwd=demo)["items"][0]["global_id"]
    wrong_copy = hippo.json("share", wrong, cwd=demo)["items"][0]["global_id"]

    # Auto-share's copy goes with its memory; one promoted by hand stays until asked.
    done = hippo.ok("forget", auto, cwd=demo).stdout
    assert done == f"Forgot [{auto}]; its global copy [{auto_copy}] was removed too\n"
    done = hippo.ok("forget", by_hand, cwd=demo).stdout
    assert done == (
        f"Forgot [{by_hand}]\nIts global copy [{hand_copy}], shared by hand, stays in every project's "
        f"reads; `hippoctl forget {hand_copy}` removes it\n"
    )
    rejected = hippo.json("reject", wrong, "--reason", "match came in 3.10", cwd=demo)
    assert (rejected["global_removed"], rejected["global_copies"]) == ([wrong_copy], 0)
    assert query(hippo.db, "SELECT id FROM memories") == [(hand_copy,)]
    again = hippo.json("remember", "Prefer rg over grep when searching code", cwd=demo)["id"]
    assert hippo.json("forget", again, "--global-too", cwd=demo)["global_removed"] == [hand_copy]
    assert query(hippo.db, "SELECT count(*) FROM memories") == [(0,)]


def test_forget_in_the_project_is_done_when_the_global_store_cannot_be_read(hippo: Hippo) -> None:
    """The project's forget commits first: a damaged global store is said in its reply (exit 0), not
    reported as a failed forget that a second try would call not found."""
    hippo.start()
    demo = folder(hippo, "demo")
    auto = hippo.json("remember", LESSON, "--error", cwd=demo)["id"]
    hippo.ok("sleep", cwd=demo)
    assert query(hippo.db, "SELECT count(*) FROM memories") == [(1,)]
    hippo.stop()
    with open(hippo.db, "r+b") as damaged:
        damaged.write(b"not a database at all" * 8)
    hippo.start()
    done = hippo.ctl("forget", auto, cwd=demo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Forgot [{auto}]; the global store could not be checked for copies"), done
    assert hippo.ctl("inspect", auto, cwd=demo).returncode == 1
