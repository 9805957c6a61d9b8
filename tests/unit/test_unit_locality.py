"""Which lessons auto-share may copy beyond their project (model/locality.py, share.auto_share_eligible),
and what a global copy says of where it came from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hippod.model import share
from hippod.model.locality import project_names, tie
from hippod.model.memory import Memory

NAMES = frozenset({"demo", "demo-shop", "payments", "checkout.ts"})


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("always use pnpm instead of npm in this repo", "this repo"),
        ("Our codebase pins Node 20", "Our codebase"),
        ("In this project the tests need Docker", "this project"),
        ("Build breaks when web/src/checkout.ts imports lodash", "web/src/checkout.ts"),
        ("The cache lives in ~/.cache/demo-build", "~/.cache/demo-build"),
        ("Edit src/app.py before a release", "src/app.py"),
        ("Config is read from /etc/hosts first", "/etc/hosts"),
        ("Logs go to C:\\Temp on the build box", "C:\\"),
        ("The payments worker retries twice", "payments"),
        ("demo-shop needs Python 3.12", "demo-shop"),
        ("DEMO's staging box is slow", "demo"),
        ("checkout.ts is generated; never edit it", "checkout.ts"),
    ],
)
def test_a_text_naming_its_project_is_tied(text: str, found: str) -> None:
    assert tie(text, NAMES) == found


@pytest.mark.parametrize(
    "text",
    [
        "PowerShell reads scripts as UTF-16 unless they carry a BOM; save them as utf-8-sig",
        "Python subprocess on windows needs shell=True for builtins",
        "Use TCP/IP keepalives and CI/CD caches and/or retries",
        "Never commit secrets to the repo",
        "A demonstration of pytest fixtures: scope them to the module",
        "Pin exact versions in package.json for reproducible installs",
    ],
)
def test_a_general_lesson_is_not_tied(text: str) -> None:
    assert tie(text, NAMES) is None


def test_a_projects_names_are_its_folder_manifests_and_uncommon_top_level_entries(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "package.json").write_text(json.dumps({"name": "@acme/storefront"}))
    (folder / "pyproject.toml").write_text('[project]\nname = "demo-tools"\n')
    (folder / "go.mod").write_text("module github.com/acme/gateway\n\ngo 1.22\n")
    for name in ("src", "tests", "README.md", ".github", "payments", "ab"):
        (folder / name).mkdir()
    (folder / "checkout.ts").write_text("")
    assert project_names(str(folder)) == {
        "demo",
        "@acme/storefront",
        "storefront",
        "demo-tools",
        "github.com/acme/gateway",
        "gateway",
        "payments",
        "checkout.ts",
    }
    (folder / "Cargo.toml").write_text("not [toml")
    assert "demo" in project_names(str(folder))  # a manifest that does not parse adds nothing


def test_auto_share_copies_only_what_names_nothing_of_its_project(make_memory: Callable[..., Memory]) -> None:
    general = make_memory("PowerShell reads scripts as UTF-16 unless they carry a BOM", tags=["error"])
    local = make_memory("always use pnpm instead of npm in this repo", tags=["decision"])
    named = make_memory("The payments worker retries twice", tags=["error"])
    assert share.auto_share_eligible(general, NAMES)
    assert not share.auto_share_eligible(local, NAMES)
    assert not share.auto_share_eligible(named, NAMES)


def test_a_copy_names_the_project_it_came_from() -> None:
    for source in (
        "shared:demo:2026-01-01T00:00:00.000Z",
        "promoted:demo",
        "auto-shared:demo:2026-01-01T00:00:00.000Z",
    ):
        assert share.reaches_every_project(source) and share.contributor(source) == "demo"
    assert not share.reaches_every_project("sync:global") and share.contributor("sync:global") is None
