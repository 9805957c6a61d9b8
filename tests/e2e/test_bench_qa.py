"""The retrieval benches on a user's machine: agent notes in the user's home never reach their stores.

`bench/longmemeval.py --budget` once crashed with a KeyError on a memory id: the bench's daemon ran
with the user's HOME, `init` imported the user's agent notes into the bench's global store, and the
budgeted recall (no top-k cut) returned them next to the haystack's sessions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2e.harness import Hippo

REPO = Path(__file__).resolve().parents[2]
NOTES = """## Gemini Added Memories
- The user's favorite hiking trail is the ridge walk above the lake
- The user goes hiking every weekend when the weather is dry
"""


def _question(qid: str, question: str, sessions: list[list[str]], answer: int) -> dict[str, object]:
    ids = [f"{qid}_s{i}" for i in range(len(sessions))]
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": question,
        "answer_session_ids": [ids[answer]],
        "haystack_session_ids": ids,
        "haystack_dates": [f"2023/05/{20 + i} (Sat) 0{i}:47" for i in range(len(sessions))],
        "haystack_sessions": [
            [
                {"role": "user", "content": text, "has_answer": i == answer},
                {"role": "assistant", "content": "Noted."},
            ]
            for i, text in enumerate(sessions)
        ],
    }


def _data(path: Path) -> None:
    questions = [
        _question(
            "q1",
            "Which hiking trail did I say was my favorite?",
            [
                "I bought new boots for hiking and the trail along the river is my favorite now",
                "Can you suggest a recipe for dinner with lentils?",
                "My sister visits next weekend and we want to see a film",
            ],
            0,
        ),
        _question(
            "q2",
            "What did I plan for the weekend when the weather is dry?",
            [
                "We plan a picnic for the weekend if the weather stays dry",
                "How do I fix a flat bicycle tyre?",
                "I started learning the piano last month",
            ],
            0,
        ),
    ]
    path.write_text(json.dumps(questions))


def test_longmemeval_budget_keeps_the_users_agent_notes_out(hippo: Hippo, tmp_path: Path) -> None:
    gemini = Path(hippo.user_home, ".gemini")
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text(NOTES)
    data = tmp_path / "lme.json"
    _data(data)

    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "longmemeval.py"), "--data", str(data), "--budget", "4000"],
        env=hippo.env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    summary = done.stdout.splitlines()[-1]
    assert summary.startswith("longmemeval session recall_any@5=1.000"), summary
    assert "budget4000 recall_any=1.000 recall_all=1.000" in summary and summary.endswith("n=2"), summary
    # The notes are still where the user keeps them, untouched.
    assert (gemini / "GEMINI.md").read_text() == NOTES
    assert os.listdir(gemini) == ["GEMINI.md"]
