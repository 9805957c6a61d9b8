"""The work-queue cards (integrations.md §14) through `hippoctl card ...` against a real daemon: every
verb and state, the lease, `--run` checks, cycles, the scheduled reclaim and racing claims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

T0 = "2026-12-01T09:00:00.000Z"


def _card(hippo: Hippo, folder: str, *args: str) -> Any:
    """`hippoctl --json card <args>` that must succeed, parsed."""
    return hippo.json("card", *args, cwd=folder)


def _refused(hippo: Hippo, folder: str, code: int, *args: str) -> str:
    """`hippoctl card <args>` that must exit `code` with one line on stderr; returns that line."""
    done = hippo.ctl("card", *args, cwd=folder)
    assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def _rows(db: str) -> list[Any]:
    """Every card, run and comment row: what a refused command must leave as it was."""
    return [
        query(db, "SELECT * FROM cards ORDER BY id"),
        query(db, "SELECT * FROM card_runs ORDER BY card_id, run"),
        query(db, "SELECT * FROM card_comments ORDER BY id"),
        query(db, "SELECT * FROM card_deps ORDER BY card_id, depends_on"),
    ]


def test_a_card_from_create_to_done_frees_its_dependents(hippo: Hippo) -> None:
    hippo.start(fake_now=T0)
    folder, db = project(hippo)
    first = _card(hippo, folder, "create", "--title", "Add retries", "--repo", "api", "--budget", "30")
    assert first["card"]["status"] == "ready" and first["card"]["budget"] == 30
    second = _card(hippo, folder, "create", "--title", "Ship it", "--depends-on", "1")
    assert second["card"]["status"] == "waiting"

    claimed = _card(hippo, folder, "claim", "1", "--runtime", "claude-code")
    assert claimed["card"]["status"] == "running"
    assert claimed["run"]["run"] == 1 and claimed["run"]["runtime"] == "claude-code"
    assert claimed["run"]["lease_expires_at"] == "2026-12-01T13:00:00.000Z"  # now + 4 hours
    beat = _card(hippo, folder, "heartbeat", "1", "--run", "1")
    assert beat["run"]["lease_expires_at"] == "2026-12-01T13:00:00.000Z"
    blocked = _card(hippo, folder, "block", "1", "--run", "1", "--reason", "needs the staging key")
    assert blocked["card"]["status"] == "blocked" and blocked["run"]["end_reason"] == "blocked"
    again = _card(hippo, folder, "claim", "1", "--runtime", "codex")
    assert again["run"]["run"] == 2 and again["card"]["status"] == "running"
    assert _card(hippo, folder, "review", "1", "--run", "2")["card"]["status"] == "review"
    done = _card(hippo, folder, "complete", "1", "--outcome", "success", "--run", "2")
    assert done["card"]["status"] == "done" and done["readied"] == [2]
    assert _card(hippo, folder, "show", "2")["card"]["status"] == "ready"

    hippo.ok("handoff", "create", "--summary", "retries in, tests green", "--task", "card:1", cwd=folder)
    hippo.ok("handoff", "create", "--summary", "about something else", "--task", "card:2", cwd=folder)
    _card(hippo, folder, "comment", "1", "--body", "merged as #42")
    shown = _card(hippo, folder, "show", "1")
    assert shown["dependents"] == [2] and shown["depends_on"] == []
    assert [(r["run"], r["runtime"], r["end_reason"]) for r in shown["runs"]] == [
        (2, "codex", "review"),
        (1, "claude-code", "blocked"),
    ]
    assert [c["body"] for c in shown["comments"]] == ["needs the staging key", "merged as #42"]
    assert shown["comments"][0]["author"] == "claude-code"  # a block's reason is its runtime's
    assert shown["handoff"]["summary"] == "retries in, tests green"
    text = hippo.ok("card", "show", "1", cwd=folder).stdout
    assert "#1 [done] Add retries" in text and "latest handoff" in text and "retries in" in text
    listed = hippo.ok("card", "list", cwd=folder).stdout.splitlines()
    assert listed == ["#2 [ready] Ship it", "#1 [done] Add retries"]  # newest-updated first
    assert [c["id"] for c in _card(hippo, folder, "list", "--status", "done")["cards"]] == [1]
    audited = query(db, "SELECT op FROM audit_log WHERE target_id = 'card:1' ORDER BY id")
    assert [op for (op,) in audited] == [
        "card_create",
        "card_claim",
        "card_block",
        "card_claim",
        "card_review",
        "card_complete",
    ]


def test_failure_and_partial_shelve_and_dependents_keep_waiting(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    for title in ("one", "two"):
        _card(hippo, folder, "create", "--title", title)
    _card(hippo, folder, "create", "--title", "after both", "--depends-on", "1", "--depends-on", "2")
    for card, outcome in (("1", "failure"), ("2", "success")):
        _card(hippo, folder, "claim", card, "--runtime", "a")
        _card(hippo, folder, "review", card)
        finished = _card(hippo, folder, "complete", card, "--outcome", outcome)
        assert finished["card"]["status"] == ("shelved" if outcome == "failure" else "done")
        assert finished["readied"] == []  # card 3 still has a dependency that is not done
    assert _card(hippo, folder, "show", "3")["card"]["status"] == "waiting"


def test_refusals_are_named_and_change_nothing(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    _card(hippo, folder, "create", "--title", "base")
    _card(hippo, folder, "create", "--title", "child", "--depends-on", "1")
    _card(hippo, folder, "claim", "1", "--runtime", "a")
    before = _rows(db)

    assert "unknown dependency: no card #9" in _refused(
        hippo, folder, 2, "create", "--title", "x", "--depends-on", "9"
    )
    assert "dependency cycle refused: #1 -> #2 -> #1" in _refused(
        hippo, folder, 2, "depend", "1", "--on", "2"
    )
    assert "dependency cycle refused: #2 -> #2" in _refused(hippo, folder, 2, "depend", "2", "--on", "2")
    assert "run 5 is not its live run; the live run is 1 (a)" in _refused(
        hippo, folder, 1, "heartbeat", "1", "--run", "5"
    )
    for verb in (("review", "1", "--run", "2"), ("block", "1", "--run", "2", "--reason", "r")):
        assert "is not its live run" in _refused(hippo, folder, 1, *verb)
    assert "`card complete` needs it review" in _refused(
        hippo, folder, 1, "complete", "1", "--outcome", "success"
    )
    assert "card #1 is running (run 1 by a)" in _refused(hippo, folder, 1, "claim", "1", "--runtime", "b")
    assert "card #2 is waiting" in _refused(hippo, folder, 1, "claim", "2", "--runtime", "b")
    assert "no card #77" in _refused(hippo, folder, 1, "show", "77")
    assert "needs --runtime" in _refused(hippo, folder, 2, "claim", "1")
    assert "--outcome does not go with `card review`" in _refused(
        hippo, folder, 2, "review", "1", "--outcome", "success"
    )
    assert "the title is 301 characters" in _refused(hippo, folder, 2, "create", "--title", "t" * 301)
    _refused(hippo, folder, 2, "list", "--status", "sideways")
    _refused(hippo, folder, 2, "show", "9223372036854775808")
    assert _rows(db) == before


def test_two_agents_claiming_one_card_at_once_one_wins(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    cards = 12
    for n in range(cards):
        _card(hippo, folder, "create", "--title", f"card {n}")
    # Both claims of every card start together: 24 clients at once.
    procs = [
        (
            card,
            runtime,
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "hippoctl",
                    "--json",
                    "card",
                    "claim",
                    str(card),
                    "--runtime",
                    runtime,
                ],
                cwd=folder,
                env=hippo.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for card in range(1, cards + 1)
        for runtime in ("agent-a", "agent-b")
    ]
    winners: dict[int, list[str]] = {}
    for card, runtime, proc in procs:
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            assert json.loads(out)["run"]["run"] == 1
            winners.setdefault(card, []).append(runtime)
        else:
            assert proc.returncode == 1 and f"card #{card} is running (run 1 by " in err, err
    assert all(len(winners.get(card, [])) == 1 for card in range(1, cards + 1)), winners
    runs = query(
        db, "SELECT card_id, COUNT(*), MAX(runtime) FROM card_runs GROUP BY card_id ORDER BY card_id"
    )
    assert [(c, n, r) for c, n, r in runs] == [(c, 1, winners[c][0]) for c in range(1, cards + 1)]


def test_the_daemon_reclaims_expired_leases_on_its_own(hippo: Hippo) -> None:
    hippo.start(fake_now=T0)
    folder, db = project(hippo)
    _card(hippo, folder, "create", "--title", "long job")
    _card(hippo, folder, "create", "--title", "short job")
    _card(hippo, folder, "claim", "1", "--runtime", "a")
    hippo.stop()
    # Later, with the lease of four hours passed: `card reclaim` reclaims nothing before it is due...
    hippo.start(fake_now="2026-12-01T12:59:59.000Z")
    assert _card(hippo, folder, "reclaim")["reclaimed"] == []
    _card(hippo, folder, "claim", "2", "--runtime", "b")
    hippo.stop()
    # ...and after it, the daemon's own schedule does it, every cardReclaimMinutes.
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        json.dump({"cardReclaimMinutes": 0.01}, handle)
    hippo.start(fake_now="2026-12-01T13:00:01.000Z")
    status = hippo.json("daemon", "status")
    assert status["schedule"]["reclaim_next"] is not None

    def reclaimed() -> bool:
        return query(db, "SELECT status FROM cards WHERE id = 1") == [("ready",)]

    assert hippo.wait_for(reclaimed, timeout=60), hippo.ok("card", "list", cwd=folder).stdout
    runs = query(db, "SELECT card_id, run, end_reason, ended_at FROM card_runs ORDER BY card_id")
    assert runs == [(1, 1, "expired", "2026-12-01T13:00:01.000Z"), (2, 1, None, None)]
    assert query(db, "SELECT status FROM cards WHERE id = 2") == [("running",)]  # its lease runs to 16:59
    actors = query(db, "SELECT actor FROM audit_log WHERE op = 'card_reclaim'")
    assert actors == [("daemon:card-reclaim",)]
