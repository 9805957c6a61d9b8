"""`hippoctl refine <id>` end to end: the real daemon asks a local stub of Anthropic's Messages API
for a rewrite, the client shows it and supersedes through `supersede` when the user agrees."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from model_stub import anthropic_message

from e2e.extraction_support import CI, PATH, SECRET_TAGGED, id_of, note_of, stubbed
from e2e.sleep_support import query

if TYPE_CHECKING:
    from e2e.harness import Hippo

REWRITE = (
    "CI's integration test flaked because Redis started after pytest; a compose healthcheck wait fixes it."
)


def _answer(request: Any) -> Any:
    return anthropic_message(json.dumps({"text": REWRITE}), tokens=(150, 30))


def _superseded_by(db: str, memory_id: str) -> Any:
    [(new,)] = query(db, "SELECT superseded_by FROM memories WHERE id = ?", (memory_id,))
    return new


def test_yes_supersedes_with_the_rewrite(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        done = hippo.ok("refine", old, "--yes", cwd=folder)
        assert f"{old} now:\n  {CI}\nRewritten by claude-sonnet-4-6:\n  {REWRITE}\n" in done.stdout
        assert f"Superseded [{old}] with [" in done.stdout
        new = _superseded_by(db, old)
        assert new is not None and id_of(db, REWRITE) == new
        [seen] = stub.requests(PATH)
        assert seen.body["messages"][0]["content"] == "<memory>\n" + CI + "\n</memory>"
        assert '{"text": "<the rewrite>"}' in seen.body["system"]


def test_json_reports_both_texts_and_the_new_id(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        report = hippo.json("refine", old, "--yes", cwd=folder)
        assert (report["id"], report["old"], report["new"]) == (old, CI, REWRITE)
        assert report["superseded"] is True and report["new_id"] == _superseded_by(db, old)


def test_dry_run_only_shows(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        done = hippo.ok("refine", old, "--dry-run", cwd=folder)
        assert REWRITE in done.stdout and "Dry run: nothing was superseded." in done.stdout
        assert _superseded_by(db, old) is None and len(stub.requests(PATH)) == 1


def test_without_a_terminal_or_yes_nothing_is_superseded(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        done = hippo.ctl("refine", old, cwd=folder, input="y\n")
        assert done.returncode == 1
        assert REWRITE in done.stdout
        assert done.stderr == (
            f"hippoctl: Not superseded: there is no terminal to ask on. Run `hippoctl refine {old} --yes` "
            "to supersede it with a rewrite (the model may word it differently).\n"
        )
        assert _superseded_by(db, old) is None


def test_without_the_key_the_error_names_it_and_nothing_is_sent(hippo: Hippo) -> None:
    with stubbed(hippo, key=False) as (stub, folder, db):
        done = hippo.ctl("refine", id_of(db, CI), "--yes", cwd=folder)
        assert done.returncode == 1
        assert done.stderr.startswith(
            "hippoctl: refine needs ANTHROPIC_API_KEY in the daemon's environment, and it is not set (try: "
        )
        assert len(done.stderr.splitlines()) == 1 and stub.requests() == []


def test_extraction_turned_off_makes_refine_refuse_and_send_nothing(hippo: Hippo) -> None:
    with stubbed(hippo, {"extraction": {"enabled": False}}) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        for extra in (["--yes"], ["--dry-run"]):
            done = hippo.ctl("refine", old, *extra, cwd=folder)
            assert done.returncode == 1
            assert done.stderr == (
                f"hippoctl: refine sends nothing from this store: {folder}/.hippo/config.json sets "
                '"extraction": {"enabled": false}\n'
            )
        assert stub.requests() == [] and _superseded_by(db, old) is None
        report = json.loads(hippo.ctl("--json", "doctor", cwd=folder).stdout)
        network = {c["name"]: c for c in report["checks"]}["Network"]
        assert f"never from the store at {folder}/.hippo, where extraction is off" in network["message"]


def test_a_secret_flagged_memory_is_never_sent(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        secret = id_of(db, SECRET_TAGGED)
        done = hippo.ctl("refine", secret, "--yes", cwd=folder)
        assert done.returncode == 1
        assert done.stderr == f"hippoctl: {secret} looks like it holds a secret, and refine never sends one\n"
        assert stub.requests() == [] and _superseded_by(db, secret) is None


def _on_terminal(hippo: Hippo, args: list[str], cwd: str, answer: bytes) -> tuple[int, str]:
    """hippoctl with a terminal for stdin, stdout and stderr, answering its question with `answer`."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", *args], stdin=secondary, stdout=secondary, stderr=secondary,
        env=hippo.env, cwd=cwd,
    )  # fmt: skip
    os.close(secondary)
    shown = bytearray()
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown.extend(chunk)
        if not answered and b"[y/N] " in shown:
            os.write(main, answer)
            answered = True
    code = proc.wait(timeout=10)
    os.close(main)
    return code, shown.decode("utf-8", errors="replace").replace("\r\n", "\n")


def test_on_a_terminal_it_asks_first(hippo: Hippo) -> None:
    with stubbed(hippo) as (stub, folder, db):
        stub.serve(PATH, _answer)
        old = id_of(db, CI)
        code, shown = _on_terminal(hippo, ["refine", old], folder, b"n\n")
        assert code == 0 and f"Supersede {old} with this? [y/N] " in shown and "Not superseded." in shown
        assert _superseded_by(db, old) is None
        code, shown = _on_terminal(hippo, ["refine", old], folder, b"y\n")
        assert code == 0 and f"Superseded [{old}] with [" in shown
        assert _superseded_by(db, old) == id_of(db, REWRITE)
        assert [note_of(s.body) for s in stub.requests(PATH)] == [f"<memory>\n{CI}\n</memory>"] * 2
