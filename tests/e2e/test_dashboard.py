"""The dashboard in a real browser (integrations.md §13): a real daemon, `hippoctl dashboard`, and
headless Chromium looking at what a person would see."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import Browser, Page

from e2e.dashboard_support import (
    DESKTOP,
    PHONE,
    VIEWS,
    browser,
    figure,
    open_dashboard,
    overflow,
    planted,
    redraw,
    screens,
    show,
)
from e2e.sleep_support import project

if TYPE_CHECKING:
    from e2e.harness import Hippo

__all__ = ["browser", "screens"]  # module-scoped fixtures, used by name

ON = "The feature flag is enabled for production users"
OFF = "The feature flag is disabled for production users"


def test_every_view_draws_counts_match_status_and_fits_a_phone(
    hippo: Hippo, browser: Browser, screens: Path
) -> None:
    hippo.start()
    folder, db = project(hippo)
    planted(hippo, db, 60)
    hippo.ok("remember", ON, cwd=folder)
    hippo.ok("remember", OFF, cwd=folder)
    hippo.ok("remember", "Releases are cut from the main branch on Thursdays", "--pin", cwd=folder)
    hippo.ok("remember", "Never hand the deploy key to a build step", "--global", cwd=folder)
    hippo.ok("sleep", "--no-share", cwd=folder)
    hippo.ok("recall", "build cache", cwd=folder)  # a row on the token ledger
    reply = open_dashboard(hippo, cwd=folder)
    status = hippo.json("status", cwd=folder)["stores"]
    assert [s["kind"] for s in status] == ["project", "global"]
    assert reply["stores"] == [s["path"] for s in status]

    page = browser.new_page(viewport=DESKTOP)
    try:
        show(page, reply["url"], "overview")
        for store in status:
            scope = f"[data-store-kind={store['kind']}]"
            for field in ("total", "pinned", "superseded", "dormant", "open_conflicts", "at_risk"):
                assert figure(page, scope, field) == f"{store[field]:,}", (store["kind"], field)
            for layer, count in store["layers"].items():
                assert figure(page, scope, f"layer-{layer}") == f"{count:,}"
        project_store = status[0]
        assert project_store["dormant"] > 0 and project_store["open_conflicts"] == 1

        shots = []
        for view in VIEWS:
            wanted = "search?q=feature%20flag" if view == "search" else view
            show(page, reply["url"], wanted)
            shot = screens / f"{view}-1280.png"
            page.screenshot(path=str(shot))
            shots.append(shot)
        # Each is a PNG of the page at 1280x800 (the IHDR chunk's width and height).
        assert {s.read_bytes()[16:24] for s in shots} == {
            (1280).to_bytes(4, "big") + (800).to_bytes(4, "big")
        }

        show(page, reply["url"], "map")
        assert page.locator("#view-map .scroll tbody tr").count() == 50  # one page, never the whole store
        assert "Page 1 of 2" in page.inner_text("#view-map .pager")
        layers = {layer: f"{n:,}" for layer, n in project_store["layers"].items()}
        for layer, count in layers.items():
            assert page.inner_text(f"#view-map [data-layer={layer}] [data-field=count]") == count
        assert page.locator("#view-map canvas").count() >= 2  # the histogram and the decay curves

        show(page, reply["url"], "dormant")
        assert f"{project_store['dormant']:,} dormant" in page.inner_text("#view-dormant")
        show(page, reply["url"], "pinned")
        assert "Releases are cut from the main branch" in page.inner_text("#view-pinned")
        show(page, reply["url"], "sleeps")
        assert "went dormant" in page.inner_text("#view-sleeps .run")
    finally:
        page.close()

    phone = browser.new_page(viewport=PHONE)
    try:
        for view in VIEWS:
            wanted = "search?q=feature%20flag" if view == "search" else view
            show(phone, reply["url"], wanted)
            phone.screenshot(path=str(screens / f"{view}-390.png"))
            assert overflow(phone) <= 0, f"{view} is wider than a 390 px screen"
    finally:
        phone.close()


def test_a_conflict_appears_after_a_sleep_finds_it_and_its_command_resolves_it(
    hippo: Hippo, browser: Browser
) -> None:
    hippo.start()
    folder, _ = project(hippo)
    reply = open_dashboard(hippo, cwd=folder)
    page = browser.new_page(viewport=DESKTOP)
    try:
        show(page, reply["url"], "conflicts")
        assert "No open conflicts" in page.inner_text("#view-conflicts")
        on = hippo.json("remember", ON, cwd=folder)["id"]
        off = hippo.json("remember", OFF, cwd=folder)["id"]
        redraw(page, "conflicts")
        assert "No open conflicts" in page.inner_text("#view-conflicts")  # only a sleep finds them

        hippo.ok("sleep", "--no-share", cwd=folder)
        redraw(page, "conflicts")
        card = page.locator("#view-conflicts .conflict")
        assert card.count() == 1
        sides = card.locator(".side")
        assert sorted(sides.locator(".content").all_inner_texts()) == sorted([ON, OFF])
        keep_on = card.locator(f".side[data-id='{on}'] .command code").inner_text()
        assert keep_on == f"hippoctl -C {shlex.quote(folder)} resolve 1 --keep {on}"
        assert off in card.locator(f".side[data-id='{off}'] .command code").inner_text()

        # The command as the page shows it, run from elsewhere, resolves the conflict.
        words = shlex.split(keep_on)
        assert words[0] == "hippoctl"
        done = hippo.ok(*words[1:], cwd=hippo.root)
        assert f"Resolved conflict #1: kept {on}" in done.stdout
        redraw(page, "conflicts")
        assert "No open conflicts" in page.inner_text("#view-conflicts")
    finally:
        page.close()


def test_the_search_box_finds_a_memory_without_strengthening_it(hippo: Hippo, browser: Browser) -> None:
    hippo.start()
    made = hippo.json("remember", "Staging deploys need the VPN up first", "--global")["id"]
    other = hippo.json("remember", "Lunch is at noon on Fridays", "--global")["id"]
    reply = open_dashboard(hippo, "--global")
    page = browser.new_page(viewport=DESKTOP)
    try:
        show(page, reply["url"], "overview")
        page.fill("#search input[name=q]", "staging vpn")
        page.click("#search button")
        page.wait_for_selector("#view-search[data-state=ready]", timeout=60_000)
        results = page.locator("#view-search .result")
        assert results.count() == 1
        assert results.first.get_attribute("data-id") == made
        assert "Staging deploys need the VPN up first" in results.first.inner_text()
        assert results.first.locator(".retrievals").inner_text() == "retrieved 0 times"
        for _ in range(3):
            redraw(page, "search")
        assert hippo.json("inspect", made, "--global")["memory"]["retrieval_count"] == 0
        assert hippo.json("inspect", other, "--global")["memory"]["retrieval_count"] == 0

        # A recall from the CLI does strengthen: the page shows it, so the check above can fail.
        hippo.ok("recall", "staging vpn", "--global")
        assert hippo.json("inspect", made, "--global")["memory"]["retrieval_count"] == 1
        redraw(page, "search")
        assert page.locator("#view-search .result .retrievals").first.inner_text() == "retrieved 1 time"
    finally:
        page.close()


def _column(page: Page, status: str) -> list[str]:
    """The ids of the cards a column of the board shows, top to bottom."""
    return page.locator(f"#view-cards .column[data-status={status}] .card").evaluate_all(
        "cards => cards.map(card => card.dataset.card)"
    )


def test_a_card_moves_column_when_an_agent_claims_it(hippo: Hippo, browser: Browser, screens: Path) -> None:
    hippo.start()
    folder, _ = project(hippo)
    first = hippo.json(
        "card", "create", "--title", "Add retries to the uploader", "--repo", "api", cwd=folder
    )
    hippo.json("card", "create", "--title", "Ship the uploader", "--depends-on", "1", cwd=folder)
    assert first["card"]["status"] == "ready"
    reply = open_dashboard(hippo, cwd=folder)
    page = browser.new_page(viewport=DESKTOP)
    try:
        show(page, reply["url"], "cards")
        columns = page.locator("#view-cards .column h3").all_inner_texts()
        assert [c.split()[0].lower() for c in columns] == [
            "waiting",
            "ready",
            "running",
            "blocked",
            "review",
            "done",
            "shelved",
        ]
        assert (
            _column(page, "ready") == ["1"]
            and _column(page, "waiting") == ["2"]
            and _column(page, "running") == []
        )
        assert "Add retries to the uploader" in page.inner_text("#view-cards [data-card='1']")

        hippo.ok("card", "claim", "1", "--runtime", "x", cwd=folder)
        redraw(page, "cards")
        assert _column(page, "ready") == [] and _column(page, "running") == ["1"]
        assert page.inner_text("#view-cards .column[data-status=running] .count") == "1"
        page.screenshot(path=str(screens / "cards-claimed-1280.png"))

        hippo.ok("card", "review", "1", cwd=folder)
        hippo.ok("card", "complete", "1", "--outcome", "success", cwd=folder)
        redraw(page, "cards")
        assert _column(page, "done") == ["1"] and _column(page, "ready") == ["2"]
    finally:
        page.close()
