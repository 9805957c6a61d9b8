"""End-to-end: `import` of the files people have (ChatGPT's data export, its zip) and the refusal
of files that are not what their flag says: exit 1, one line naming the problem, nothing stored."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from e2e.harness import Hippo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chatgpt" / "conversations.json"

STATED = {
    "We're using GitHub Actions with a self-hosted runner for the billing service": "preference",
    "Never deploy on Fridays, the on-call rotation is too thin": "rule",
    "keep the Terraform state in the S3 backend with DynamoDB locking": "decision",
    "always freeze time in the payments suite": "rule",
    "Avoid pinning freezegun below 1.4 in the test requirements, the old one leaks": "preference",
    "prefer pytest over unittest for any new test file": "preference",
    "export invoices as CSV from the admin page": "spec",
    "email a monthly summary to each account owner": "spec",
    "run the migrations before the app container starts": "rule",
}


def _exported(hippo: Hippo) -> list[dict[str, Any]]:
    memories: list[dict[str, Any]] = json.loads(hippo.ok("export").stdout)["memories"]
    return memories


def _write(hippo: Hippo, name: str, data: str | bytes) -> str:
    path = Path(hippo.root) / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return str(path)


def test_chatgpt_data_export_imports_what_the_user_stated(hippo: Hippo) -> None:
    hippo.start()
    path = str(Path(hippo.root) / "conversations.json")
    shutil.copy(FIXTURE, path)
    done = hippo.ctl("--json", "import", "--chatgpt", path)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert (reply["total"], reply["imported"], reply["skipped"], reply["conversations"]) == (10, 9, 1, 6)
    assert "1 item looked like a secret: not stored" in done.stderr
    assert '1 conversation marked "don\'t remember": passed over' in done.stderr
    rows = {m["content"]: m for m in _exported(hippo)}
    assert {text: row["tags"] for text, row in rows.items()} == {
        text: ["imported", "chatgpt", category] for text, category in STATED.items()
    }
    assert {(m["source"], m["confidence"], m["layer"]) for m in rows.values()} == {
        ("import:chatgpt", "observed", "episodic")
    }
    assert not any("ghp_" in text for text in rows)
    again = hippo.ok("import", "--chatgpt", path)
    assert "is unchanged since its import" in again.stdout


def test_chatgpt_export_zip_and_memory_list_still_import(hippo: Hippo) -> None:
    hippo.start()
    archive = Path(hippo.root) / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("chat.html", "<html></html>")
        handle.write(FIXTURE, "conversations.json")
    assert hippo.json("import", "--chatgpt", str(archive))["imported"] == 9
    memories = _write(hippo, "memories.json", json.dumps({"memories": ["Prefers dark mode in every editor"]}))
    assert hippo.json("import", "--chatgpt", memories)["imported"] == 1
    lines = _write(
        hippo, "memories.txt", "- Lives in Lyon, works remotely\n• Uses vim keybindings everywhere\n"
    )
    assert hippo.json("import", "--chatgpt", lines)["imported"] == 2


def _refused(hippo: Hippo, *args: str) -> str:
    """The import fails with exit 1 and one line on stderr, and the store is unchanged."""
    before = _exported(hippo)
    done = hippo.ctl("import", *args)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert _exported(hippo) == before
    return done.stderr.strip()


def test_chatgpt_of_a_markdown_file_is_refused_with_the_flag_to_use(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "Something already stored")
    path = _write(hippo, "notes.md", "# Project notes\n\n## Build\n- Run the tests before pushing to main\n")
    assert _refused(hippo, "--chatgpt", path) == (
        f"hippoctl: cannot import {path}: it is markdown (line 1 is a markdown heading), not ChatGPT's "
        f"export or a memory list (try: hippoctl import --markdown {path})"
    )
    assert hippo.json("import", "--markdown", path)["imported"] == 1


def test_claude_of_chatgpt_s_export_is_refused(hippo: Hippo) -> None:
    hippo.start()
    path = str(Path(hippo.root) / "conversations.json")
    shutil.copy(FIXTURE, path)
    assert _refused(hippo, "--claude", path) == (
        f"hippoctl: cannot import {path}: it is ChatGPT's conversation export, not Claude's "
        f"(try: hippoctl import --chatgpt {path})"
    )


@pytest.mark.parametrize(
    ("fmt", "name", "data", "problem"),
    [
        ("claude", "garbage", "xk3j", "it holds no text to import (every piece is under 10 characters)"),
        ("claude", "CLAUDE.md", "", "the file is empty"),
        ("claude", "memory.json", '{"memories": ', "not a valid --claude file: not valid JSON"),
        ("claude", "memory.json", '{"foo": 1}', "not a valid --claude file: expected a memory list"),
        ("claude", "CLAUDE.md", "<!-- hippo:start -->\n- x\n<!-- hippo:end -->\n", "nothing but hippo's own"),
        ("chatgpt", "memories.txt", "ok\nshort\n", "it holds no line of 10 characters or more"),
        ("chatgpt", "list.json", "[1, 2, 3]", "no item of the list holds text"),
        ("chatgpt", "empty.json", "", "not a valid --chatgpt file: the file is empty"),
        ("markdown", "notes.md", "\n\n", "the file is empty"),
        ("file", "notes.txt", "a\nb\n", "it holds no text to import"),
        ("cursor", ".cursorrules", "", "the file is empty"),
        ("json", "export.json", "", "not a valid JSON export: the file is empty"),
        ("json", "export.json", "# notes\n", "not a valid JSON export: not valid JSON"),
    ],
)
def test_a_file_with_nothing_to_import_is_refused(
    hippo: Hippo, fmt: str, name: str, data: str, problem: str
) -> None:
    hippo.start()
    path = _write(hippo, name, data)
    error = _refused(hippo, f"--{fmt}", path)
    assert error.startswith(f"hippoctl: cannot import {path}: ") and problem in error, error


@pytest.mark.parametrize("fmt", ["claude", "markdown", "file", "cursor", "chatgpt"])
def test_a_binary_file_is_refused_as_not_text(hippo: Hippo, fmt: str) -> None:
    hippo.start()
    path = _write(hippo, "blob", b"header text\x00\x01\x02" + bytes(range(32, 127)))
    assert _refused(hippo, f"--{fmt}", path) == (
        f"hippoctl: cannot read {path}: not text (control byte 0x00 at offset 11)"
    )


def test_an_empty_structured_export_is_an_empty_import(hippo: Hippo) -> None:
    hippo.start()
    for fmt, data in (("json", '{"hippod_version": "0.1.0", "memories": []}'), ("chatgpt", "[]")):
        path = _write(hippo, f"empty-{fmt}.json", data)
        done = hippo.ok("import", f"--{fmt}", path)
        assert done.stdout == "Imported 0 of 0 (0 duplicates skipped, 0 rejected)\n"
