"""A store's config.json or the daemon's daemon.json that does not parse: never silently ignored
(memory-model.md §4, daemon.md §2)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.gitrepo import commit, make_repo

if TYPE_CHECKING:
    from e2e.harness import Hippo

GARBAGE = '{"defaultBudget": 12,,}'
PARSE_ERROR = "Expecting property name enclosed in double quotes: line 1 column 22 (char 21)"
# Verbs that use the store, each with what it needs to run.
VERBS = (
    ("remember", "Walruses haul out on the ice floes"),
    ("recall", "walruses"),
    ("context", "walruses"),
    ("status",),
    ("export",),
    ("sleep",),
    ("learn", "--git"),
    ("import", "--markdown", "notes.md"),
)


def project(hippo: Hippo) -> Path:
    folder = make_repo(Path(hippo.root, "proj"))
    commit(folder, "fix: walrus counts were off by one")
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(folder))
    (folder / "notes.md").write_text("# Notes\n\n- Walruses use their tusks to climb onto the ice\n")
    return folder


def checks(hippo: Hippo, cwd: Path) -> list[dict[str, Any]]:
    done = hippo.ctl("--json", "doctor", cwd=str(cwd))
    document: dict[str, Any] = json.loads(done.stdout)
    return [c for c in document["checks"] if c["name"] == "Config"]


def test_a_config_json_that_does_not_parse_fails_every_verb_with_one_line(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo)
    hippo.ok("remember", "Narwhal tusks are teeth", cwd=str(folder))
    config = folder / ".hippo" / "config.json"
    config.write_text(GARBAGE)
    expected = f"hippoctl: {config} is not valid JSON ({PARSE_ERROR}) (try: fix {config})\n"
    for verb in VERBS:
        done = hippo.ctl(*verb, cwd=str(folder))
        assert (done.returncode, done.stdout, done.stderr) == (1, "", expected), verb
    # doctor reads it without the daemon's store registry: a failed Config check with its fix.
    assert checks(hippo, folder) == [
        {
            "name": "Config",
            "status": "fail",
            "message": f"{config} is not valid JSON ({PARSE_ERROR})",
            "fix": f"fix {config}",
        }
    ]

    # Fixed: the verbs work again at once, without a daemon restart.
    config.write_text('{"defaultBudget": 12}')
    assert hippo.ok("recall", "narwhal", cwd=str(folder)).stderr == ""
    assert [c["status"] for c in checks(hippo, folder)] == ["ok"]


def test_a_global_config_json_that_does_not_parse_fails_init_before_it_creates_a_store(
    hippo: Hippo,
) -> None:
    hippo.start()
    os.makedirs(hippo.home, exist_ok=True)
    config = Path(hippo.home, "config.json")
    config.write_text("[1, 2]")
    done = hippo.ctl("--global", "remember", "Belugas are white")
    assert done.returncode == 1
    assert done.stderr == f"hippoctl: {config} is not a JSON object (try: fix {config})\n"

    folder = Path(hippo.root, "proj")
    (folder / ".hippo").mkdir(parents=True)
    (folder / ".hippo" / "config.json").write_bytes(b'{"defaultBudget": "\xff"}')
    done = hippo.ctl("init", "--no-hooks", "--no-schedule", cwd=str(folder))
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "config.json is not UTF-8 text (byte 19)" in done.stderr
    assert not (folder / ".hippo" / "hippo.db").exists()


def test_a_daemon_json_that_does_not_parse_is_logged_and_told_to_every_client(hippo: Hippo) -> None:
    os.makedirs(hippo.home)
    daemon_json = Path(hippo.home, "daemon.json")
    daemon_json.write_text(GARBAGE)
    hippo.start()
    notice = (
        f"{daemon_json} is not valid JSON ({PARSE_ERROR}): hippod runs on its defaults until it is "
        "fixed and hippod restarted"
    )
    assert f"ERROR hippod: {notice}" in Path(hippo.log).read_text()
    done = hippo.ok("--global", "remember", "Orcas hunt in pods")
    assert done.stderr == notice + "\n"
    assert hippo.ok("--global", "recall", "orcas").stderr == notice + "\n"
    [config] = checks(hippo, Path(hippo.root))
    assert (config["status"], config["message"]) == (
        "fail",
        f"{daemon_json} is not valid JSON ({PARSE_ERROR})",
    )
    assert config["fix"] == f"fix {daemon_json}, then run: hippoctl daemon restart"
