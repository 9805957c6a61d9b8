"""End-to-end: `import --<format>` and `export` through a real daemon and hippoctl (ingest.md §1, §2)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _write(hippo: Hippo, name: str, text: str) -> str:
    path = Path(hippo.root) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _exported(hippo: Hippo, *args: str, cwd: str | None = None) -> list[dict[str, Any]]:
    done = hippo.ok("export", *args, cwd=cwd)
    memories: list[dict[str, Any]] = json.loads(done.stdout)["memories"]
    return memories


def _import(hippo: Hippo, *args: str, cwd: str | None = None) -> dict[str, Any]:
    reply: dict[str, Any] = hippo.json("import", *args, cwd=cwd)
    return reply


MARKDOWN = """Notes before any heading, kept without a section.

# Build & Test
- Run make test before every push to main
- Use pnpm, never npm, in this repository
  because the lockfile is pnpm's
- Run make test before every push to main!
- tiny

## Deploy notes
Deploys go out on Tuesdays only, after the freeze.
"""


def test_markdown_import_fields_tags_and_reply(hippo: Hippo) -> None:
    hippo.start()
    path = _write(hippo, "notes.md", MARKDOWN)
    done = hippo.ok("import", "--markdown", path, "--tag", "team", "--tag", "team")
    assert done.stdout == "Imported 4 of 5 (1 duplicate skipped, 0 rejected)\n"
    rows = {m["content"]: m for m in _exported(hippo)}
    assert set(rows) == {
        "Notes before any heading, kept without a section.",
        "Run make test before every push to main",
        "Use pnpm, never npm, in this repository because the lockfile is pnpm's",
        "Deploys go out on Tuesdays only, after the freeze.",
    }
    assert rows["Notes before any heading, kept without a section."]["tags"] == ["imported", "team"]
    assert rows["Run make test before every push to main"]["tags"] == ["imported", "build-test", "team"]
    assert rows["Deploys go out on Tuesdays only, after the freeze."]["tags"] == [
        "imported",
        "deploy-notes",
        "team",
    ]
    for memory in rows.values():
        assert (memory["layer"], memory["kind"], memory["confidence"]) == (
            "episodic",
            "distilled",
            "observed",
        )
        assert (memory["source"], memory["half_life_days"], memory["origin_project"]) == (
            "import:markdown",
            365,
            "",
        )
        assert memory["tenant_id"] == "default" and memory["pinned"] is False
    entries = hippo.json("audit", "list", "--op", "import")["entries"]
    assert sorted(e["target"] for e in entries) == sorted(m["id"] for m in rows.values())
    found = hippo.json("recall", "pnpm lockfile")["results"]
    assert (
        found
        and found[0]["id"]
        == rows["Use pnpm, never npm, in this repository because the lockfile is pnpm's"]["id"]
    )


def test_importing_the_same_file_twice_adds_nothing(hippo: Hippo) -> None:
    hippo.start()
    path = _write(hippo, "notes.md", MARKDOWN)
    dry = _import(hippo, "--markdown", path, "--dry-run")
    first = _import(hippo, "--markdown", path)  # a dry run records nothing: this one reads the file
    assert (dry["total"], dry["unchanged"], first["imported"], first["total"]) == (5, False, 4, 5)
    second = _import(hippo, "--markdown", path)
    assert (second["imported"], second["unchanged"], second["entries"]) == (0, True, [])
    assert second["imported_at"].endswith("Z")
    done = hippo.ok("import", "--markdown", path)
    assert done.stdout.startswith(f"Imported nothing: {path} is unchanged since its import on ")
    assert "(5 chunks then; --force reads it again)" in done.stdout
    # --force reads it again: every chunk is a near-copy of what the first import stored.
    forced = _import(hippo, "--markdown", path, "--force")
    assert (forced["unchanged"], forced["imported"], forced["skipped"]) == (False, 0, 5)
    # A changed file is read whole again; only what is new goes in.
    Path(path).write_text(MARKDOWN + "- Tag every release with its changelog entry\n", encoding="utf-8")
    changed = _import(hippo, "--markdown", path)
    assert (changed["imported"], changed["skipped"], changed["total"]) == (1, 5, 6)
    assert _import(hippo, "--markdown", path)["unchanged"] is True
    assert len(_exported(hippo)) == 5
    # The record is per format: the same bytes read as --file are another import.
    assert _import(hippo, "--file", path)["unchanged"] is False
    # One chunk is one chunk.
    single = _write(hippo, "one.md", "- Run the migrations before the deploy script\n")
    _import(hippo, "--markdown", single)
    assert "(1 chunk then; --force reads it again)" in hippo.ok("import", "--markdown", single).stdout


def test_json_reply_lists_entries_and_truncation_warns(hippo: Hippo) -> None:
    hippo.start()
    long = "word " * 300
    path = _write(hippo, "notes.txt", f"First paragraph of the file\n\n{long}\n")
    done = hippo.ctl("--json", "import", "--file", path)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)  # stdout holds the document only
    assert {k: reply[k] for k in ("total", "imported", "skipped", "rejected", "truncated")} == {
        "total": 2,
        "imported": 2,
        "skipped": 0,
        "rejected": 0,
        "truncated": 1,
    }
    assert [e["preview"] for e in reply["entries"]] == ["First paragraph of the file", ("word " * 16).strip()]
    assert all(e["id"].startswith("mem_") and e["tags"] == ["imported"] for e in reply["entries"])
    assert "truncated chunk 2 to 1000 chars" in done.stderr
    contents = [m["content"] for m in _exported(hippo)]
    assert max(len(c) for c in contents) == 999  # cut to 1000, trailing space trimmed


def test_dry_run_lists_and_writes_nothing(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "Deploys go out on Tuesdays only, after the freeze.")
    path = _write(hippo, "notes.md", MARKDOWN)
    done = hippo.ok("import", "--markdown", path, "--dry-run", "--tag", "x")
    assert done.stdout.splitlines() == [
        "Dry run: nothing was changed.",
        "- Notes before any heading, kept without a section. [imported, x]",
        "- Run make test before every push to main [imported, build-test, x]",
        "- Use pnpm, never npm, in this repository because the lockfile is pnpm's [imported, build-test, x]",
        "Would import 3 of 5 (2 duplicates skipped, 0 rejected)",
    ]
    reply = _import(hippo, "--markdown", path, "--dry-run")
    assert reply["dry_run"] is True and reply["imported"] == 0
    assert [e["id"] for e in reply["entries"]] == [None, None, None]
    assert len(_exported(hippo)) == 1


def test_global_writes_to_the_global_store_from_a_project(hippo: Hippo) -> None:
    hippo.start()
    project = Path(hippo.root) / "proj"
    project.mkdir()
    hippo.ok("init", cwd=str(project))
    path = _write(hippo, "rules.txt", "Always run the linter first\nNever commit generated files\n")
    local = _import(hippo, "--file", path, cwd=str(project))
    assert local["imported"] == 2 and local["store"] == str(project / ".hippo")
    assert {m["origin_project"] for m in _exported(hippo, cwd=str(project))} == {"proj"}
    glob = _import(hippo, "--global", "--file", path, cwd=str(project))
    assert glob["imported"] == 2 and glob["store"] == hippo.home
    assert {m["origin_project"] for m in _exported(hippo, "--global", cwd=str(project))} == {""}


def test_rejected_values_are_counted_not_stored(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("reject", "--value", "Never commit generated files", "--reason", "we do now")
    path = _write(hippo, "rules.txt", "Always run the linter first\nNEVER commit   generated files\n")
    done = hippo.ok("import", "--file", path)
    assert done.stdout == "Imported 1 of 2 (0 duplicates skipped, 1 rejected)\n"
    assert [m["content"] for m in _exported(hippo)] == ["Always run the linter first"]


def test_chatgpt_claude_and_cursor_formats(hippo: Hippo) -> None:
    hippo.start()
    chatgpt = _write(hippo, "memories.json", json.dumps({"memories": ["Prefers dark mode in every editor"]}))
    claude = _write(
        hippo,
        "CLAUDE.md",
        "# Conventions\n- Use ruff for linting everything\n"
        "<!-- hippo:start -->\n- hippo context --auto --budget 1500\n<!-- hippo:end -->\n",
    )
    _write(
        hippo,
        "repo/.cursor/rules/style.mdc",
        "---\ndescription: style\nalwaysApply: true\n---\n- Prefer tabs for indentation\n",
    )
    _write(hippo, "repo/.cursor/rules/nested/tests.md", "1. Every bug fix gets a regression test\n")
    assert _import(hippo, "--chatgpt", chatgpt)["imported"] == 1
    assert _import(hippo, "--claude", claude)["imported"] == 2
    assert _import(hippo, "--cursor", str(Path(hippo.root) / "repo/.cursor/rules"))["imported"] == 2
    rows = {m["content"]: (m["tags"], m["source"]) for m in _exported(hippo)}
    assert rows == {
        "Prefers dark mode in every editor": (["imported", "chatgpt"], "import:chatgpt"),
        "# Conventions": (["imported", "claude"], "import:claude"),
        "Use ruff for linting everything": (["imported", "claude"], "import:claude"),
        "Every bug fix gets a regression test": (["imported", "cursor"], "import:cursor"),
        "Prefer tabs for indentation": (["imported", "cursor"], "import:cursor"),
    }


def _seed_every_field(hippo: Hippo) -> None:
    hippo.ok("remember", "The staging database runs Postgres 13", "--tag", "db")
    old = hippo.json("recall", "staging postgres")["results"][0]["id"]
    hippo.ok("supersede", old, "The staging database runs Postgres 16")
    hippo.ok("remember", "Flaky test in the payments suite times out", "--error", "--pin", "--inferred")
    hippo.ok("remember", "Deploys go out on Tuesdays", "--scope", "team:ops", "--tag", "deploy")
    hippo.json("recall", "deploys tuesdays")
    hippo.ok("outcome", "--good")
    hippo.json("recall", "flaky payments")
    hippo.ok("outcome", "--bad")


KEPT = (
    "content",
    "tags",
    "layer",
    "kind",
    "confidence",
    "pinned",
    "created",
    "valid_from",
    "last_retrieved",
    "retrieval_count",
    "half_life_days",
    "emotional_valence",
    "outcome_positive",
    "outcome_negative",
    "outcome_score",
    "source",
    "scope",
    "origin_project",
    "schema_fit",
    "legacy_base",
)


def test_json_export_round_trip_into_an_empty_store(hippo: Hippo) -> None:
    hippo.start()
    _seed_every_field(hippo)
    out = str(Path(hippo.root) / "export.json")
    done = hippo.ok("export", out)
    assert done.stdout.strip() == f"Exported 4 memories to {out}"
    document = json.loads(Path(out).read_text())
    assert set(document) == {"hippod_version", "exported_at", "store", "memories"}
    assert oct(os.stat(out).st_mode & 0o777) == "0o600"
    before = document["memories"]
    assert any(m["superseded_by"] for m in before) and any(m["outcome_positive"] for m in before)

    project = Path(hippo.root) / "empty"
    project.mkdir()
    hippo.ok("init", cwd=str(project))
    reply = _import(hippo, "--json", out, cwd=str(project))
    assert (reply["imported"], reply["skipped"], reply["rejected"]) == (4, 0, 0)
    after = _exported(hippo, cwd=str(project))

    def kept(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(tuple(json.dumps(m[k]) for k in KEPT) for m in rows)

    assert kept(after) == kept(before)
    assert not {m["id"] for m in after} & {m["id"] for m in before}  # new ids
    new_by_content = {m["content"]: m for m in after}
    old = new_by_content["The staging database runs Postgres 13"]
    assert old["superseded_by"] == new_by_content["The staging database runs Postgres 16"]["id"]
    # And once more: nothing new.
    assert _import(hippo, "--json", out, cwd=str(project))["imported"] == 0


def test_original_hippo_export_sets_legacy_base_and_keeps_long_content(hippo: Hippo) -> None:
    hippo.start()
    records = [
        {
            "id": "m1",
            "content": "Old seven-day memory " + "x" * 1200,
            "half_life_days": 7,
            "retrieval_count": 0,
        },
        {
            "id": "m2",
            "content": "A decision on the old base",
            "half_life_days": 92,
            "retrieval_count": 1,
            "source": "decision",
        },
        {"id": "m3", "content": "Already on the new base", "half_life_days": 365},
    ]
    path = _write(hippo, "hippo-export.json", json.dumps(records))
    assert _import(hippo, "--json", path)["truncated"] == 0
    rows = {m["content"][:12]: m for m in _exported(hippo)}
    assert len(rows["Old seven-da"]["content"]) > 1000
    assert rows["Old seven-da"]["legacy_base"] is True
    assert rows["A decision o"]["legacy_base"] is True
    assert rows["Already on t"]["legacy_base"] is False
    # The same numbers in a hippod export are no legacy.
    hippod_doc = {
        "hippod_version": "0.1.0",
        "memories": [{"content": "hippod record on seven days", "half_life_days": 7}],
    }
    assert _import(hippo, "--json", _write(hippo, "h.json", json.dumps(hippod_doc)))["imported"] == 1
    assert {m["content"]: m["legacy_base"] for m in _exported(hippo)}["hippod record on seven days"] is False


def test_markdown_export_and_stdout(hippo: Hippo) -> None:
    hippo.start()
    memory_id = hippo.json("remember", "Markdown export body", "--tag", "a")["id"]
    text = hippo.ok("export", "--format", "markdown").stdout
    stored = hippo.json("inspect", memory_id)["memory"]
    assert stored["tags"][0] == "a"
    meta = f"_episodic · verified · {', '.join(stored['tags'])} · {stored['created']} · strength 1.00_"
    assert text == f"### {memory_id}\n\nMarkdown export body\n\n{meta}\n"
    out = Path(hippo.root) / "out.md"
    hippo.ok("export", str(out), "--format", "markdown")
    assert out.read_text() == text


def _unchanged_after(hippo: Hippo, *args: str) -> str:
    before = _exported(hippo)
    done = hippo.ctl("import", *args)
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert _exported(hippo) == before
    return done.stderr.strip()


def test_unreadable_inputs_are_one_line_errors_and_import_nothing(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "Something already stored")
    root = Path(hippo.root)
    missing = str(root / "missing.md")
    assert _unchanged_after(hippo, "--markdown", missing) == f"hippoctl: cannot read {missing}: no such file"
    folder = root / "folder"
    folder.mkdir()
    assert (
        _unchanged_after(hippo, "--file", str(folder)) == f"hippoctl: cannot read {folder}: it is a directory"
    )
    latin = root / "latin1.txt"
    latin.write_bytes(b"caf\xe9 au lait is fine\nsecond line here\n")
    assert _unchanged_after(hippo, "--file", str(latin)) == (
        f"hippoctl: cannot read {latin}: not UTF-8 text (byte 0xe9 at offset 3)"
    )
    huge = root / "huge.txt"
    with open(huge, "wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)
    error = _unchanged_after(hippo, "--file", str(huge))
    assert error.startswith(f"hippoctl: cannot read {huge}: it is 64.0 MiB, over the 64 MiB limit")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_permission_is_refused(hippo: Hippo) -> None:
    hippo.start()
    secret = Path(hippo.root) / "secret.md"
    secret.write_text("- a rule nobody may read\n")
    secret.chmod(0)
    assert (
        _unchanged_after(hippo, "--markdown", str(secret))
        == f"hippoctl: cannot read {secret}: permission denied"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"hippod_version": "0.1.0", "memories": [{"content": "valid first record"}', "not valid JSON"),
        ('{"hippod_version": "0.1.0", "memories": {"content": "x"}}', "expected an export"),
        ('[{"content": "valid first record"}, {"tags": ["x"]}]', "record 2 has no content"),
        (
            '[{"content": "valid first record"}, {"content": "bad layer", "layer": "cortex"}]',
            "record 2: layer",
        ),
    ],
)
def test_a_malformed_json_export_imports_nothing(hippo: Hippo, text: str, problem: str) -> None:
    hippo.start()
    path = _write(hippo, "bad.json", text)
    error = _unchanged_after(hippo, "--json", path)
    assert error.startswith(f"hippoctl: cannot import {path}: not a valid JSON export: {problem}")
