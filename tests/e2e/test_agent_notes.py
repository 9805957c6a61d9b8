"""End-to-end: agents' own notes imported by the daemon's watcher and by `import --agents`
(ingest.md §4, daemon.md §11). A real daemon watches the instance's temporary HOME."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo

WAIT = 30.0  # generous: the target is 5 s, but a loaded machine must not fail the test
FRONT = "---\nname: note\ndescription: a note\ntype: project\n---\n\n"


def _configure(hippo: Hippo, **watch: Any) -> None:
    """daemon.json watch settings, and no embeddings (recall by words is enough here)."""
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "daemon.json").write_text(json.dumps({"watch": watch}), encoding="utf-8")
    Path(hippo.home, "config.json").write_text(
        json.dumps({"embeddings": {"enabled": False}}), encoding="utf-8"
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(text, encoding="utf-8")
    temp.replace(path)


def _codex_file(hippo: Hippo) -> Path:
    return Path(hippo.user_home, ".codex", "memories", "memory_summary.md")


def _codex(hippo: Hippo, *bullets: str) -> None:
    _write(_codex_file(hippo), "# Memory summary\n## Preferences\n" + "".join(f"- {b}\n" for b in bullets))


def _found(hippo: Hippo, query: str, cwd: str | None = None) -> list[str]:
    return [r["content"] for r in hippo.json("recall", query, cwd=cwd)["results"]]


def _dormant(hippo: Hippo) -> list[tuple[str, str]]:
    return [(r["content"], r["reason"]) for r in hippo.json("dormant")["results"]]


def test_watcher_imports_changes_replaces_and_sends_deleted_notes_to_dormant(hippo: Hippo) -> None:
    _configure(hippo)
    _codex_file(hippo).parent.mkdir(parents=True)
    hippo.start()
    _codex(hippo, "Prefers ripgrep over grep for code searches")
    assert hippo.wait_for(lambda: _found(hippo, "ripgrep searches"), WAIT)
    [memory] = hippo.json("recall", "ripgrep searches")["results"]
    assert memory["tags"] == ["agent-memory", "agent:codex"]
    assert hippo.json("inspect", memory["id"])["memory"]["source"] == "agent:codex:memories/memory_summary.md"

    _codex(
        hippo, "Prefers ripgrep over grep for code searches", "Keeps commit subjects under fifty characters"
    )
    assert hippo.wait_for(lambda: _found(hippo, "commit subjects fifty"), WAIT)

    # The one-file note of OpenClaw: a change replaces its memory.
    note = Path(hippo.user_home, ".openclaw", "workspace", "MEMORY.md")
    note.parent.mkdir(parents=True)
    hippo.stop()
    hippo.start()
    _write(note, "The user reviews pull requests every morning")
    assert hippo.wait_for(lambda: _found(hippo, "pull requests morning"), WAIT)
    _write(note, "The user reviews pull requests every afternoon")
    assert hippo.wait_for(
        lambda: _found(hippo, "pull requests") == ["The user reviews pull requests every afternoon"], WAIT
    )
    ops = [e["op"] for e in hippo.json("audit", "list")["entries"]]
    assert ops.count("agent_note_import") == 3 and ops.count("agent_note_replace") == 1

    _codex(hippo, "Keeps commit subjects under fifty characters")
    expected = [("Prefers ripgrep over grep for code searches", "note_deleted")]
    assert hippo.wait_for(lambda: _dormant(hippo) == expected, WAIT)
    assert _found(hippo, "ripgrep searches") == []


def test_claude_project_notes_go_to_the_project_store(hippo: Hippo) -> None:
    _configure(hippo)
    project = os.path.realpath(os.path.join(hippo.root, "webapp"))
    os.makedirs(project)
    folder = Path(hippo.user_home, ".claude", "projects", re.sub(r"[^A-Za-z0-9]", "-", project), "memory")
    folder.mkdir(parents=True)
    other = Path(hippo.user_home, ".claude", "projects", "-somewhere-else", "memory")
    other.mkdir(parents=True)
    hippo.start()
    hippo.ok("init", cwd=project)  # registers the workspace while the daemon watches
    _write(other / "x.md", FRONT + "An unrelated project deploys with Capistrano")
    _write(folder / "MEMORY.md", "- [build](build.md)\n")
    _write(folder / "build.md", FRONT + "The webapp builds with `make dist` and needs Node 22")
    assert hippo.wait_for(lambda: _found(hippo, "webapp builds node", cwd=project), WAIT)
    [memory] = hippo.json("recall", "webapp builds node", cwd=project)["results"]
    inspected = hippo.json("inspect", memory["id"], cwd=project)
    assert inspected["store"] == os.path.join(project, ".hippo")
    source = inspected["memory"]["source"]
    assert source == f"agent:claude-code:projects/{folder.parent.name}/memory/build.md"
    # The unmatched project folder and the index file are not imported anywhere.
    assert _found(hippo, "Capistrano deploys", cwd=project) == []
    assert _found(hippo, "Capistrano deploys") == []

    (folder / "build.md").unlink()
    assert hippo.wait_for(lambda: len(hippo.json("dormant", cwd=project)["results"]) == 1, WAIT)


def test_a_root_created_after_start_is_picked_up_by_the_rescan(hippo: Hippo) -> None:
    _configure(hippo, rescanSeconds=0.5)
    hippo.start()
    status = hippo.json("daemon", "status")["watch"]
    codex_root = os.path.join(hippo.user_home, ".codex", "memories")
    assert codex_root not in status["roots"]
    _codex(hippo, "Runs database migrations only from the release branch")
    assert hippo.wait_for(lambda: codex_root in hippo.json("daemon", "status")["watch"]["roots"], WAIT)
    assert hippo.wait_for(lambda: _found(hippo, "database migrations release"), WAIT)
    assert "watch roots:" in hippo.ok("daemon", "status").stdout


def test_reconcile_at_start_imports_what_changed_while_down(hippo: Hippo) -> None:
    _configure(hippo)
    _codex(
        hippo, "Formats Python with ruff format before committing", "Uses uv to manage virtual environments"
    )
    hippo.start()
    assert hippo.wait_for(
        lambda: len(_found(hippo, "ruff format uv virtual environments committing")) == 2, WAIT
    )
    hippo.stop()
    _codex(hippo, "Uses uv to manage virtual environments", "Writes changelog entries for every release")
    hippo.start()
    assert hippo.wait_for(lambda: _found(hippo, "changelog entries release"), WAIT)
    assert hippo.wait_for(
        lambda: _dormant(hippo) == [("Formats Python with ruff format before committing", "note_deleted")],
        WAIT,
    )


def test_tool_selection_none_turns_the_watcher_and_import_off(hippo: Hippo) -> None:
    _configure(hippo)
    _codex(hippo, "Prefers small focused pull requests")
    hippo.start(env=hippo.daemon_env(HIPPO_AGENT_MEMORY_TOOLS="none"))
    assert hippo.json("daemon", "status")["watch"] == {"roots": [], "missing": []}
    off = hippo.ctl("import", "--agents", env={**hippo.env, "HIPPO_AGENT_MEMORY_TOOLS": "none"})
    assert off.returncode == 0 and off.stdout.startswith("No agent tools enabled")
    # The note is still waiting to be imported: nothing took it meanwhile.
    dry = json.loads(
        hippo.ctl(
            "--json",
            "import",
            "--agents",
            "--dry-run",
            env={**hippo.env, "HIPPO_AGENT_MEMORY_TOOLS": "codex"},
        ).stdout
    )
    assert (dry["dry_run"], dry["added"], [t["tool"] for t in dry["tools"]]) == (True, 1, ["codex"])
    assert _found(hippo, "focused pull requests") == []


def test_import_agents_skip_rules_dry_run_forget_and_restore(hippo: Hippo) -> None:
    _configure(hippo, enabled=False)
    hippo.start()
    rejected = hippo.json("remember", "Always deploy straight to production on Fridays")["id"]
    hippo.ok("reject", rejected, "--reason", "wrong")
    hippo.ok("remember", "The payments service is written in Go and owned by team Orca")
    _codex(
        hippo,
        "tiny",
        "Use token=abc123def456ghi789 for the staging API",
        "Always deploy straight to production on Fridays",
        "The payments service is written in Go and owned by team Orca, mostly",
        "Ask jane.doe@example.com before touching the billing schema",
        "Architecture notes: " + "layers " * 300,
    )
    dry = hippo.ok("import", "--agents", "--dry-run")
    assert dry.stdout.splitlines()[0] == "Dry run: nothing was changed."
    assert "codex: ~/.codex (exists)\n  found ~/.codex/memories/memory_summary.md\n" in dry.stdout
    assert (
        "would add 2, replace 0, dormant 0, skip 4 (duplicate 1, rejected 1, secret 1, short 1)" in dry.stdout
    )
    assert "claude-code: " in dry.stdout and "(missing)" in dry.stdout
    assert _found(hippo, "billing schema") == []

    done = json.loads(hippo.ok("--json", "import", "--agents").stdout)
    assert (done["added"], done["skipped"]) == (2, 4)
    assert _found(hippo, "billing schema") == ["Ask j***@example.com before touching the billing schema"]
    [long_note] = _found(hippo, "architecture notes layers")
    assert len(long_note) == 1500 + len(" [truncated]") and long_note.endswith(" [truncated]")

    again = json.loads(hippo.ok("--json", "import", "--agents").stdout)
    assert again["added"] == 0 and again["tools"][1]["unchanged"] == 3  # codex: 2 memories + 1 duplicate

    # forget marks the link suppressed: the unchanged note is not imported again.
    billing = hippo.json("recall", "billing schema")["results"][0]["id"]
    hippo.ok("forget", billing)
    assert json.loads(hippo.ok("--json", "import", "--agents").stdout)["added"] == 0
    assert _found(hippo, "billing schema") == []

    # A deleted note's memory goes dormant; restored, it no longer follows the note.
    _codex(hippo, "Ask jane.doe@example.com before touching the billing schema")
    assert json.loads(hippo.ok("--json", "import", "--agents").stdout)["dormant"] == 1
    [(content, reason)] = _dormant(hippo)
    assert content.startswith("Architecture notes") and reason == "note_deleted"
    restored = hippo.json("dormant")["results"][0]["id"]
    hippo.ok("dormant", "restore", restored)
    assert json.loads(hippo.ok("--json", "import", "--agents").stdout)["dormant"] == 0
    assert len(_found(hippo, "architecture notes layers")) == 1
