"""Which Chromium the browser tests drive and what a run without one is told (tests/programs.py); the
same for strace."""

from __future__ import annotations

import stat
from pathlib import Path

import programs
import pytest


def _program(folder: Path, name: str, runnable: bool = True) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755 if runnable else 0o644)
    return path


@pytest.fixture(autouse=True)
def no_named_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPPO_TEST_CHROMIUM", raising=False)


def test_the_first_name_on_path_that_runs_is_picked(tmp_path: Path) -> None:
    _program(tmp_path, "chromium", runnable=False)
    _program(tmp_path, "google-chrome-stable")
    browser = _program(tmp_path, "chromium-browser")
    assert programs.find_chromium(str(tmp_path), bundled=lambda: "/bundled") == str(browser)
    browser.unlink()
    assert programs.find_chromium(str(tmp_path), bundled=lambda: "/bundled") == str(
        tmp_path / "google-chrome-stable"
    )
    chromium = tmp_path / "chromium"
    chromium.chmod(chromium.stat().st_mode | stat.S_IXUSR)
    assert programs.find_chromium(str(tmp_path), bundled=lambda: "/bundled") == str(chromium)


def test_playwrights_own_is_picked_only_when_path_has_none(tmp_path: Path) -> None:
    assert programs.find_chromium(str(tmp_path), bundled=lambda: "/bundled/chrome") == "/bundled/chrome"
    assert programs.find_chromium(str(tmp_path), bundled=lambda: None) is None


def test_without_a_browser_a_run_that_may_not_install_fails_in_one_line_naming_the_command() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        programs.ensure_chromium(find=lambda: None, may_install=False)
    assert str(failed.value) == (
        "no Chromium or Chrome found (chromium, chromium-browser, google-chrome, google-chrome-stable on "
        "PATH, or Playwright's own): install it with `python -m playwright install chromium`"
    )
    with pytest.raises(pytest.fail.Exception) as failed:
        programs.ensure_strace(find=lambda: None, may_install=False)
    assert str(failed.value) == "no strace found (on PATH): install it with `sudo apt-get install strace`"


def test_a_found_program_is_used_as_it_is_without_installing_anything(tmp_path: Path) -> None:
    looks: list[None] = []
    browser = str(_program(tmp_path, "chrome"))
    assert programs.ensure_chromium(find=lambda: looks.append(None) or browser, may_install=True) == browser
    assert looks == [None]  # looked once; no install, so no second look


def test_the_browser_hippo_test_chromium_names_wins_and_must_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _program(tmp_path, "my-chrome")
    monkeypatch.setenv("HIPPO_TEST_CHROMIUM", str(named))
    assert programs.ensure_chromium(find=lambda: "/usr/bin/chromium", may_install=False) == str(named)
    named.chmod(0o644)
    with pytest.raises(pytest.fail.Exception, match=r"^HIPPO_TEST_CHROMIUM names .*my-chrome, which is not"):
        programs.ensure_chromium(find=lambda: "/usr/bin/chromium", may_install=False)
