"""hippod.model.entities on hostile text: the part of a memory read is bounded, and no pattern goes
quadratic on long runs (a webhook's message can be anything)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from hippod.model import entities

# Runs a pattern with no word break in them: a pattern that may restart at each position of a run
# tries every later position again. 400 KB of each took minutes before the URL pattern was anchored.
RUNS = {"dots": "a." * 200_000, "pairs": "ab." * 140_000, "dashes": "a-" * 200_000, "mixed": "a.b-" * 100_000}


def test_only_the_first_scan_chars_are_read() -> None:
    filler = "plain words " * (entities.SCAN_CHARS // 12 + 10)
    content = "RetryBudget is set in src/pay/limits.py\n" + filler + "LateName"
    found = entities.extract(content, [], None, "cli")
    names = [name for _, name in found.entities]
    assert names == ["src/pay/limits.py", "RetryBudget"]
    assert len(entities.scanned(filler + "LateName")) <= entities.SCAN_CHARS


def test_the_scanned_part_ends_between_words() -> None:
    text = "x" * (entities.SCAN_CHARS - 3) + " PaymentGateway tail"
    assert entities.scanned(text) == "x" * (entities.SCAN_CHARS - 3)
    assert entities.extract(text, [], None, "cli").entities == []


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_pattern_reads_a_long_run_in_one_pass(name: str) -> None:
    # In a child process with a ceiling only a quadratic blow-up reaches (each run takes well under a
    # second or two with linear patterns): the test's outcome does not hang on the bug it guards against.
    script = textwrap.dedent(
        f"""
        import re
        from hippod.model import entities
        text = {RUNS[name][:12]!r} * {len(RUNS[name]) // 12} + " https://example.com/x"
        for value in vars(entities).values():
            if isinstance(value, re.Pattern):
                list(value.finditer(text))
        print(entities._URL.findall(text))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['https://example.com/x']"


def test_urls_are_still_taken_out_before_names() -> None:
    content = "See https://github.com/org/repo/blob/main/src/app.py and FooBar"
    found = entities.extract(content, [], None, "cli")
    assert found.entities == [("symbol", "FooBar")]
    assert entities._URL.findall("git+ssh://host/x x-y.z://q") == ["git+ssh://host/x", "x-y.z://q"]
