"""A hook's work survives a crash (ingest.md §8, daemon.md §13): a spooled session-end is done only
once its whole job has committed, so killing the daemon anywhere in a replay loses no capture and
applies none twice, and the jobs a graceful stop did not start run after the next start."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from e2e.sleep_support import query
from e2e.transcripts import claude_records, codex_records, write_jsonl
from hippoctl.protocol import spool

if TYPE_CHECKING:
    from e2e.harness import Hippo

SEED = 15
COUNT = 200
KILLS = 10
WAIT = 120.0
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def pseudo_words(rng: random.Random, count: int) -> list[str]:
    """`count` distinct made-up words, so that no two captured sentences look alike to sleep."""
    found: set[str] = set()
    while len(found) < count:
        found.add("".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(4)))
    return sorted(found)


def sessions(rng: random.Random, count: int) -> list[list[str]]:
    """For each session, the words of the one decision its transcript holds."""
    words = pseudo_words(rng, count * 5)
    rng.shuffle(words)
    return [words[i * 5 : i * 5 + 5] for i in range(count)]


def decision(words: list[str]) -> str:
    return f"We decided to {' '.join(words)} for every build."


def transcript(hippo: Hippo, i: int, words: list[str]) -> str:
    """Session i's Claude Code transcript, holding one decision."""
    session = f"sess-{i:03d}"
    path = Path(hippo.user_home, ".claude", "projects", "-p", f"{session}.jsonl")
    records = [dict(r, sessionId=session) for r in claude_records([f"Plan step {i}"], [decision(words)])]
    return str(write_jsonl(path, records))


def hook_input(hippo: Hippo, i: int, path: str | None) -> dict[str, str]:
    given = {"session_id": f"sess-{i:03d}", "cwd": hippo.root, "hook_event_name": "SessionEnd",
             "reason": "prompt_input_exit"}  # fmt: skip
    return given if path is None else {**given, "transcript_path": path}


def spool_one(hippo: Hippo, name: str, stdin: dict[str, str], argv: list[str] | None = None) -> None:
    document = spool.SpoolFile(v=1, kind="session-end", created_at="2026-10-01T00:00:00Z",
                               cwd=hippo.root, env={}, argv=argv or ["session-end"], stdin=stdin)  # fmt: skip
    spool.write(hippo.home, name, document)


def spool_session_ends(hippo: Hippo, said: list[list[str]], first: int = 0) -> None:
    """One transcript and one spooled session-end per session (numbered from `first`), oldest first."""
    start = time.time()
    for i, words in enumerate(said, first):
        spool_one(
            hippo, spool.new_name(now=start + i / 1000), hook_input(hippo, i, transcript(hippo, i, words))
        )


def pending(hippo: Hippo) -> list[str]:
    return spool.json_names(os.path.join(hippo.home, "spool", "session-end"))


def captured(hippo: Hippo) -> list[str]:
    return [r[0] for r in query(hippo.db, "SELECT content FROM memories WHERE source = 'capture'")]


def captures(hippo: Hippo) -> int:
    """Captured memories so far: 0 while the daemon has not made the global store yet."""
    try:
        return int(query(hippo.db, "SELECT count(*) FROM memories WHERE source = 'capture'")[0][0])
    except sqlite3.OperationalError:  # no file yet, or no tables in it yet
        return 0


def copies(contents: list[str], said: list[list[str]]) -> list[int]:
    """How many stored memories hold each session's decision."""
    return [sum(" ".join(words) in content for content in contents) for words in said]


@pytest.mark.long
def test_killing_the_daemon_during_a_replay_of_session_ends_loses_no_capture(hippo: Hippo) -> None:
    rng = random.Random(SEED)
    said = sessions(rng, COUNT)
    spool_session_ends(hippo, said)
    kills: list[tuple[int, int]] = []
    for _ in range(KILLS):
        target = min(COUNT, captures(hippo) + rng.randint(4, 24))
        hippo.start()
        # Kill once the replay has got that far, or when every file has been taken up, then after
        # a random pause, so the kill lands in any step of a job: its sleep, capture or bookkeeping.
        assert hippo.wait_for(lambda t=target: captures(hippo) >= t or not pending(hippo), WAIT)  # type: ignore[misc]
        time.sleep(rng.uniform(0.0, 0.4))
        hippo.kill()
        kills.append((captures(hippo), len(pending(hippo))))
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT), (kills, len(pending(hippo)))
    hippo.stop()  # a graceful stop waits for the jobs still running
    found = copies(captured(hippo), said)
    lost = [i for i, n in enumerate(found) if n == 0]
    twice = [i for i, n in enumerate(found) if n > 1]
    assert (lost, twice) == ([], []), (len(lost), len(twice), kills)
    assert len(captured(hippo)) == COUNT
    assert os.listdir(os.path.join(hippo.home, "spool", "session-end")) == []
    assert not os.path.exists(os.path.join(hippo.home, "spool", "failed"))


def end_live(hippo: Hippo, stdin: dict[str, str], *args: str) -> None:
    """A session-end hook call answered by the daemon (a budget long enough never to spool it)."""
    env = hippo.daemon_env(HIPPO_HOOK_TIMEOUT_MS="60000")
    done = hippo.ctl("--json", "session-end", *args, input=json.dumps(stdin), env=env, timeout=90)
    assert done.returncode == 0 and json.loads(done.stdout)["queued"] is True, done


def logged(hippo: Hippo, text: str) -> bool:
    return text in Path(hippo.log).read_text()


def writer_of(hippo: Hippo, fifo: str) -> int:
    """The write end of `fifo`, opened once a reader waits on it (the daemon reading a transcript)."""
    found: list[int] = []

    def reader_waits() -> bool:
        try:
            found.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: nobody has it open for reading yet
            return False
        return True

    assert hippo.wait_for(reader_waits, WAIT)
    return found[0]


def blocking_codex_session(hippo: Hippo, words: list[str]) -> tuple[Path, bytes]:
    """A Codex session whose rollout is a pipe: its job blocks reading it until the test writes it.
    Returns the pipe and what to write."""
    codex = Path(hippo.user_home, ".codex")
    codex.mkdir()
    (codex / "history.jsonl").write_text(
        json.dumps({"session_id": "codex-block", "ts": 1, "text": "hi"}) + "\n"
    )
    rollout = codex / "sessions" / "2026" / "rollout-2026-10-01-codex-block.jsonl"
    rollout.parent.mkdir(parents=True)
    os.mkfifo(rollout)
    records = codex_records(["Plan the blocked step"], [decision(words)])
    return rollout, "".join(json.dumps(r) + "\n" for r in records).encode()


def test_a_graceful_stop_leaves_the_jobs_it_did_not_finish_in_the_spool(hippo: Hippo) -> None:
    rng = random.Random(SEED + 1)
    hippo.start()
    hippo.ok("init", "--global")
    hippo.stop()
    # No grace at all: a job still running when the daemon stops is cancelled.
    Path(hippo.home, "daemon.json").write_text(json.dumps({"shutdownGraceSeconds": 0}))
    said = sessions(rng, 23)
    # Session 0 (a Codex session) blocks its job, and every later job of the store queues behind it.
    rollout, content = blocking_codex_session(hippo, said[0])
    spool_one(hippo, spool.new_name(now=time.time() - 1), hook_input(hippo, 0, None),
              ["session-end", "--codex-offset", "0"])  # fmt: skip
    spool_session_ends(hippo, said[1:20], first=1)
    hippo.start()
    assert hippo.proc is not None
    proc = hippo.proc
    writer = writer_of(hippo, str(rollout))
    assert hippo.wait_for(lambda: logged(hippo, "spool: replayed 20 hook requests"), WAIT)
    for i in range(20, 23):
        end_live(hippo, hook_input(hippo, i, transcript(hippo, i, said[i])))
    assert captured(hippo) == []
    proc.send_signal(signal.SIGTERM)
    assert hippo.wait_for(lambda: logged(hippo, "left 22 hook jobs in the spool for the next start"), WAIT)
    assert hippo.wait_for(lambda: logged(hippo, "cancelled 1 running hook jobs"), WAIT)
    os.write(writer, content)
    os.close(writer)
    assert proc.wait(timeout=WAIT) == 0
    assert len(pending(hippo)) == 23  # the 20 replayed and the 3 sent live, none done
    rollout.unlink()
    rollout.write_bytes(content)
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT), len(pending(hippo))
    hippo.stop()
    assert copies(captured(hippo), said) == [1] * len(said)


def test_a_live_session_end_survives_a_kill_before_its_job_is_done(hippo: Hippo) -> None:
    [words] = sessions(random.Random(SEED + 2), 1)
    hippo.start()
    hippo.ok("init", "--global")
    rollout, content = blocking_codex_session(hippo, words)
    end_live(hippo, hook_input(hippo, 0, None), "--codex-offset", "0")
    writer = writer_of(hippo, str(rollout))  # the job is reading the rollout
    assert len(pending(hippo)) == 1  # written down before the reply
    hippo.kill()
    os.close(writer)
    rollout.unlink()
    rollout.write_bytes(content)
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    hippo.stop()
    assert copies(captured(hippo), [words]) == [1]


def test_a_job_run_again_after_its_capture_committed_does_not_capture_again(hippo: Hippo) -> None:
    """As if killed after the capture's commit and before the job's end: the capture is not redone,
    even when what it stored has gone since (forgotten here; merged by a sleep, say)."""
    [words] = sessions(random.Random(SEED + 3), 1)
    hippo.start()
    hippo.ok("init", "--global")
    hippo.stop()
    spool_session_ends(hippo, [words])
    [name] = pending(hippo)
    path = Path(hippo.home, "spool", "session-end", name)
    saved = path.read_bytes()
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo) and len(captured(hippo)) == 1, WAIT)
    [(memory,)] = query(hippo.db, "SELECT id FROM memories WHERE source = 'capture'")
    hippo.ok("forget", memory)
    hippo.stop()
    with sqlite3.connect(hippo.db) as conn:
        conn.execute("DELETE FROM spool_applied WHERE request_key = ?", (spool.key_of(name),))
    conn.close()
    path.write_bytes(saved)
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    hippo.stop()
    assert captured(hippo) == []
    key = spool.key_of(name)
    marks = {k for (k,) in query(hippo.db, "SELECT request_key FROM spool_applied")}
    [capture] = [k for k in marks if k.startswith("capture:default:")]
    assert marks == {key, f"slept:{key}", capture}
