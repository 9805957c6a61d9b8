"""The next step a text states, so `Next step:` is printed once (hippod/model/next_step.py)."""

from __future__ import annotations

import pytest

from hippod.model.next_step import next_step_of, split_next_step


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("Done. Next step: run the migration tests.", "run the migration tests."),
        ("Done.\n\nNext steps: wire the budget.\n\nThanks!", "wire the budget."),
        ("**Next step:** count the labels", "count the labels"),
        ("Tests pass! next: ship it", "ship it"),
        ("Next step: a\nNext step: b", "b"),  # the last label wins
        ("Next I will count the label lines.", "Next I will count the label lines."),  # no label
        ("The next step: is not a label mid-sentence", "The next step: is not a label mid-sentence"),
        ("Done. Next step:", "Done. Next step:"),  # a label with nothing after it
        ("  plain text  ", "plain text"),
    ],
)
def test_next_step_of(text: str, step: str) -> None:
    assert next_step_of(text) == step


def test_split_keeps_what_came_before_the_label() -> None:
    assert split_next_step("Done. The tests pass.\n\nNext step: ship") == ("Done. The tests pass.", "ship")
    assert split_next_step("No label here") == ("No label here", None)
