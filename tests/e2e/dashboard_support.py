"""The dashboard under test: a real daemon's dashboard opened by `hippoctl dashboard`, looked at in
a headless Chromium or Chrome (whichever tests/programs.py finds) driven by Playwright, as a person
would see it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import programs
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from e2e.sleep_support import STAMP, make, plant

if TYPE_CHECKING:
    from e2e.harness import Hippo

VIEWS = ("overview", "map", "pinned", "dormant", "conflicts", "sleeps", "tokens", "cards", "search")
# Ceilings, not expectations: a loaded machine may take long, and nothing here measures speed.
DRAWN_WITHIN_MS = 60_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
OLD = "2020-01-01T00:00:00.000Z"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole module."""
    path = programs.chromium()
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the views' screenshots go; printed so a person can look at them after the run."""
    folder = tmp_path_factory.mktemp("dashboard-screens")
    print(f"\ndashboard screenshots: {folder}")
    return folder


def open_dashboard(hippo: Hippo, *args: str, cwd: str | None = None) -> dict[str, Any]:
    """`hippoctl --json dashboard --no-open --port 0 <args>`: the reply (url, port, store, stores)."""
    reply: dict[str, Any] = hippo.json("dashboard", "--no-open", "--port", "0", *args, cwd=cwd)
    assert reply["running"] is True and reply["url"].startswith("http://127.0.0.1:"), reply
    return reply


def show(page: Page, url: str, view: str) -> None:
    """Go to one view and wait until its data is drawn (or its error shown)."""
    name = view.split("?")[0]
    base, _, query = url.partition("?")
    page.goto(f"{base}{'?' + query if query else ''}#{view}")
    drawn(page, name)


def drawn(page: Page, name: str) -> None:
    """Wait until the view's data is on the page; fail with the view's own words if it errs."""
    section = f"#view-{name}"
    page.wait_for_selector(
        f"{section}[data-state=ready], {section}[data-state=error]", state="attached", timeout=DRAWN_WITHIN_MS
    )
    state = page.get_attribute(section, "data-state")
    assert state == "ready", page.inner_text(section)


def redraw(page: Page, name: str) -> None:
    """Draw the current view again from fresh data (what a person's reload does)."""
    page.reload()
    drawn(page, name)


def overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: nothing to scroll sideways)."""
    width: int = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    return width


def figure(page: Page, scope: str, field: str) -> str:
    """The text of one figure on the page, e.g. the project store's memory count."""
    return page.inner_text(f"{scope} [data-field='{field}']")


WORDS = (
    "cache build deploy staging vpn schema migration flaky retry timeout queue worker lint format "
    "release branch tag docker image volume secret token rotate budget ledger index vacuum backup "
    "restore replica lag metric alert paging oncall runbook rollback canary feature flag"
).split()


def lesson(i: int) -> str:
    """A lesson of its own: six words of WORDS picked by i, so sleep finds no two alike."""
    picked = [WORDS[(i * 7 + k * (i % 11 + 3)) % len(WORDS)] for k in range(6)]
    return f"Lesson {i}: " + " ".join(dict.fromkeys(picked))


def planted(hippo: Hippo, db: str, count: int) -> None:
    """`count` memories written with hippod's store code while the daemon is stopped: a spread of
    ages, retrievals and outcome marks, some pinned, some long unused (the next sleep parks those)."""
    hippo.stop()
    rows = [
        make(
            lesson(i),
            last_retrieved=OLD if i % 10 == 0 else STAMP,
            retrieval_count=i % 7,
            outcome_positive=i % 3,
            outcome_negative=int(i % 5 == 0),
            pinned=i % 25 == 1,
            layer="semantic" if i % 4 == 0 else "episodic",
            half_life_days=30.0 if i % 10 == 0 else 365.0,
        )
        for i in range(count)
    ]
    # In a thread of its own: Playwright keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(plant, db, rows).result()
    hippo.start()
