"""The client helps: --version, `help <verb>`, `did you mean`, and --json before or after the verb,
through the real client and a real daemon."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.harness import wait_for
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo


def one_line_usage_error(hippo: Hippo, *args: str) -> str:
    done = hippo.ctl(*args)
    assert done.returncode == 2, (args, done)
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, (args, done.stderr)
    return done.stderr.strip()


def test_version_flag_prints_the_client_version_without_a_daemon(hippo: Hippo) -> None:
    done = hippo.ctl("--version")
    assert done.returncode == 0 and re.fullmatch(r"hippoctl \S+ \(protocol 1\)\n", done.stdout), done
    assert not os.path.exists(hippo.socket)  # no daemon was asked, or started
    hippo.start()
    assert hippo.ok("version").stdout.startswith(done.stdout)  # the client+daemon verb stays


def test_help_verb_prints_a_verbs_help_with_examples(hippo: Hippo) -> None:
    done = hippo.ok("help", "recall")
    assert done.stdout == hippo.ok("recall", "--help").stdout
    assert done.stdout.startswith("usage: hippoctl recall")
    assert "\nexamples:\n  hippoctl recall " in done.stdout
    assert "--limit N             at most N memories" in done.stdout
    assert hippo.ok("help").stdout == hippo.ok("--help").stdout
    assert "hippoctl help <verb>" in hippo.ok("help").stdout
    message = one_line_usage_error(hippo, "help", "recal")
    assert message == "hippoctl: error: unknown verb 'recal'; did you mean 'recall'?"
    assert not os.path.exists(hippo.socket)


def test_a_mistyped_verb_gets_did_you_mean_not_the_list_of_verbs(hippo: Hippo) -> None:
    assert (
        one_line_usage_error(hippo, "recal", "deploy")
        == "hippoctl: error: unknown verb 'recal'; did you mean 'recall'?"
    )
    assert one_line_usage_error(hippo, "hook", "lst").endswith("did you mean 'list'?")
    assert one_line_usage_error(hippo, "recall", "deploy", "--limt", "2").endswith("did you mean '--limit'?")
    message = one_line_usage_error(hippo, "teleport")
    assert "remember" not in message and len(message) < 100, message


def test_typos_get_one_line_naming_the_mistake_and_exit_2(hippo: Hippo) -> None:
    for args, message in (
        (("--tmeout", "3", "status"), "unknown option '--tmeout'; did you mean '--timeout'?"),
        (("recall", "--limt", "3", "cache"), "unknown option '--limt'; did you mean '--limit'?"),
        (("inspect", ""), "the memory id is empty"),
    ):
        assert one_line_usage_error(hippo, *args) == f"hippoctl: error: {message}", args
    # Of `start` and `status`, the action that only looks is suggested.
    assert one_line_usage_error(hippo, "daemon", "stat").endswith("; did you mean 'status'?")
    assert one_line_usage_error(hippo, "hook", "install", "claude").endswith("; did you mean 'claude-code'?")
    assert not os.path.exists(hippo.socket)  # all refused before a daemon was asked

    # The daemon refuses an empty id from a client that skips the check, as a usage error too.
    hippo.start()
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=7, cwd=hippo.root, body=m.Inspect(id="")))
        reply = conn.recv()
    assert isinstance(reply, m.Error) and reply.exit_code == 2, reply
    assert reply.message == "the memory id is empty", reply


def _settled(hippo: Hippo) -> bool:
    """The background work a remember leaves (its mirror, its vector) is done, so status holds still."""
    store = json.loads(hippo.ok("status", "--json").stdout)["stores"][0]
    return store["mirrors"]["missing"] == 0 and not (store["embeddings"] or "").startswith("0 of ")


def test_json_after_the_verb_is_the_json_before_it(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "Staging deploys need the VPN up first")
    assert wait_for(lambda: _settled(hippo), 30)
    for args in (
        ("status",),
        ("conflicts",),
        ("rejections",),
        ("peers",),
        ("workspaces",),
        ("audit", "list"),
    ):
        before = json.loads(hippo.ok("--json", *args).stdout)
        after = json.loads(hippo.ok(*args, "--json").stdout)
        assert before == after, args
    found = json.loads(hippo.ok("recall", "staging", "--json").stdout)
    assert [r["content"] for r in found["results"]] == ["Staging deploys need the VPN up first"]
    assert json.loads(hippo.ok("daemon", "status", "--json").stdout)["pid"] == hippo.proc.pid  # type: ignore[union-attr]


def test_export_json_prints_the_memories(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "Staging deploys need the VPN up first")
    hippo.ok("remember", "Run make lint before pushing")
    for args in (("export", "--json"), ("--json", "export"), ("export", "-", "--json")):
        document = json.loads(hippo.ok(*args).stdout)
        contents = sorted(memory["content"] for memory in document["memories"])
        assert contents == ["Run make lint before pushing", "Staging deploys need the VPN up first"], args
    message = one_line_usage_error(hippo, "export", "--format", "markdown", "--json")
    assert message.startswith("hippoctl: error: export --json prints the memories as JSON")
    out = Path(hippo.root, "memories.md")
    written = json.loads(hippo.ok("export", str(out), "--format", "markdown", "--json").stdout)
    assert written["count"] == 2 and written["path"] == str(out) and out.read_text().startswith("### mem_")


def test_import_json_names_the_format_before_a_path_and_the_output_otherwise(hippo: Hippo) -> None:
    hippo.start()
    notes = Path(hippo.root, "notes.md")
    notes.write_text("# Deploys\n\n- Staging deploys need the VPN up first\n- Run make lint before pushing\n")
    reply = json.loads(hippo.ok("import", "--markdown", str(notes), "--json").stdout)
    assert (reply["imported"], reply["total"]) == (2, 2)
    export = Path(hippo.root, "export.json")
    hippo.ok("export", str(export))
    done = hippo.ok("import", "--json", str(export), "--dry-run")
    assert done.stdout.splitlines() == [
        "Dry run: nothing was changed.",
        "Would import 0 of 2 (2 duplicates skipped, 0 rejected)",
    ]
    reply = json.loads(hippo.ok("import", "--json", str(export), "--json").stdout)
    assert (reply["total"], reply["skipped"]) == (2, 2)
    message = one_line_usage_error(hippo, "import", "--json")
    assert message.startswith("hippoctl: error: import needs a source:")


def test_hook_and_daemon_verbs_honour_json(hippo: Hippo) -> None:
    hippo.start()
    reply = json.loads(hippo.ok("last-sleep", "--keep", "--json").stdout)
    assert reply["shown"] is False and reply["store"] == os.path.realpath(hippo.home)
    stopped = json.loads(hippo.ok("daemon", "stop", "--json").stdout)
    assert stopped == {"running": False, "stopped": True}
    assert json.loads(hippo.ok("daemon", "stop", "--json").stdout) == {"running": False, "stopped": False}
    started = json.loads(hippo.ok("daemon", "start", "--json").stdout)
    assert started["running"] is True and started["started"] is True and started["pid"] > 0
    again = json.loads(hippo.ok("daemon", "start", "--json").stdout)
    assert again == {"running": True, "started": False, "pid": started["pid"]}
    restarted = json.loads(hippo.ok("daemon", "restart", "--json").stdout)
    assert restarted["started"] is True and restarted["pid"] != started["pid"]
    hippo.ok("daemon", "stop")


def test_verbs_without_json_output_refuse_it_in_one_line(hippo: Hippo) -> None:
    for args in (
        ("watch", "true", "--json"),
        ("--json", "watch", "true"),
        ("--json", "mcp"),
        ("--json", "help"),
    ):
        message = one_line_usage_error(hippo, *args)
        assert message.endswith("has no JSON output; leave out --json"), (args, message)
