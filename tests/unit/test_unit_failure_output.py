"""The salient lines `watch` keeps of a failed command's output (hippod/ingest/failure_output.py)."""

from __future__ import annotations

from hippod.ingest.failure_output import salient_lines, summary

HOME = "/home/dev"
CWD = "/home/dev/shop"


def lines(stderr: str, stdout: str = "") -> list[str]:
    return salient_lines(stderr, stdout, cwd=CWD, home=HOME)


OLD_NPM = """Error: cart total is wrong
    at Object.<anonymous> (/home/dev/shop/test.js:3:9)
npm ERR! code ELIFECYCLE
npm ERR! errno 1
npm ERR! shop@1.0.0 test: `node test.js`
npm ERR! Exit status 1
npm ERR!
npm ERR! Failed at the shop@1.0.0 test script.
npm ERR! This is probably not a problem with npm. There is likely additional logging output above.

npm ERR! A complete log of this run can be found in:
npm ERR!     /home/dev/.npm/_logs/2026-12-02T02_31_11_123Z-debug-0.log
"""

NEW_NPM = (
    "npm error code 1\n"
    "npm error path /home/dev/shop\n"
    "npm error command failed\n"
    "npm error command sh -c node test.js\n"
    "npm error A complete log of this run can be found in: "
    "/home/dev/.npm/_logs/2026-12-02T02_31_11_123Z-debug-0.log\n"
)

NODE = """node:assert:90
  throw new AssertionError(obj);
  ^

AssertionError [ERR_ASSERTION]: cart total is wrong

2 !== 3

    at Object.<anonymous> (/home/dev/shop/test.js:3:8)
  code: 'ERR_ASSERTION',
Node.js v20.20.2
npm notice New minor version of npm available! 11.19.1 -> 11.21.2
"""

PYTEST = """============================= test session starts ==============================
collected 1 item

test_x.py F                                                              [100%]

=================================== FAILURES ===================================
    def test_a():
>       assert 1 == 2
E       assert 1 == 2

test_x.py:2: AssertionError
=========================== short test summary info ============================
FAILED test_x.py::test_a - assert 1 == 2
============================== 1 failed in 0.06s ===============================
"""


def test_npm_chatter_goes_and_the_errors_stay() -> None:
    assert lines(OLD_NPM) == ["Error: cart total is wrong", "Failed at the shop@1.0.0 test script."]
    assert lines(NODE) == ["AssertionError [ERR_ASSERTION]: cart total is wrong"]
    # Nothing but npm's boilerplate: nothing looks like an error, and the boilerplate is not kept either.
    assert lines(NEW_NPM) == []


def test_pytest_on_stdout() -> None:
    assert lines("", PYTEST) == [
        "E assert 1 == 2",
        "test_x.py:2: AssertionError",
        "FAILED test_x.py::test_a - assert 1 == 2",
        "1 failed in 0.06s",
    ]


def test_a_python_traceback_keeps_the_exception() -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/home/dev/shop/x.py", line 3, in <module>\n'
        '    raise ValueError("bad input")\n'
        "ValueError: bad input\n"
    )
    assert lines(traceback) == ["ValueError: bad input"]


def test_paths_and_times_are_normalised() -> None:
    text = (
        "\x1b[31m[12:01:02] ERROR open /tmp/abc/x.db: permission denied at 2026-01-02T03:04:05.123Z\x1b[0m\n"
        "error: cannot read /home/dev/.config/shop.toml or /home/dev/shop/src/app.ts\n"
        "error: cannot read /mnt/home/dev/shop/other\n"
    )
    assert lines(text) == [
        "[<time>] ERROR open <tmp>/abc/x.db: permission denied at <time>",
        "error: cannot read ~/.config/shop.toml or src/app.ts",
        "error: cannot read /mnt/home/dev/shop/other",  # not under the home folder
    ]


def test_first_five_distinct_lines() -> None:
    text = "\n".join(["Error: same thing"] * 3 + ["ERROR: SAME THING"] + [f"Error {n}" for n in range(9)])
    assert lines(text) == ["Error: same thing", "Error 0", "Error 1", "Error 2", "Error 3"]


def test_counts_of_zero_are_not_errors_and_the_tail_serves_instead() -> None:
    assert lines("", "Tests: 0 failed, 3 passed\nno errors found\nDone in 2s\n") == [
        "Tests: 0 failed, 3 passed",
        "no errors found",
        "Done in 2s",
    ]
    assert lines("one\ntwo\nthree\nfour\n") == ["two", "three", "four"]
    assert lines("", "") == [] and summary("", "", cwd=None, home=None) == ""


def test_long_lines_are_cut_and_joined_on_one_line() -> None:
    text = "Error: " + "x" * 300 + "\nfatal: second"
    joined = summary(text, "", cwd=CWD, home=HOME)
    first, second = joined.split(" | ")
    assert len(first) == 200 and first.endswith("…") and second == "fatal: second"


def test_secrets_are_scrubbed_before_a_line_is_cut() -> None:
    token = "ghp_" + "a" * 36
    (line,) = lines("Error: " + "x" * 150 + f" bad credentials for {token}")
    assert token[:12] not in line and line.endswith("[REDACTED:github]")
