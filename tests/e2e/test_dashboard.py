"""The dashboard in a real browser (integrations.md §13): a real daemon, `hippoctl dashboard`, and
headless Chromium looking at what a person would see."""

from __future__ import annotations

import json
import os
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from playwright.sync_api import Browser, Page

from e2e.dashboard_support import (
    DESKTOP,
    PHONE,
    VIEWS,
    browser,
    figure,
    open_dashboard,
    overflow,
    redraw,
    screens,
    show,
)
from e2e.sleep_support import STAMP, make, plant, project

if TYPE_CHECKING:
    from e2e.harness import Hippo

__all__ = ["browser", "screens"]  # module-scoped fixtures, used by name

ON = "The feature flag is enabled for production users"
OFF = "The feature flag is disabled for production users"
OLD = "2020-01-01T00:00:00.000Z"
WORDS = (
    "cache build deploy staging vpn schema migration flaky retry timeout queue worker lint format "
    "release branch tag docker image volume secret token rotate budget ledger index vacuum backup "
    "restore replica lag metric alert paging oncall runbook rollback canary feature flag"
).split()


def _text(i: int) -> str:
    """A lesson of its own: six words of WORDS picked by i, so sleep finds no two alike."""
    picked = [WORDS[(i * 7 + k * (i % 11 + 3)) % len(WORDS)] for k in range(6)]
    return f"Lesson {i}: " + " ".join(dict.fromkeys(picked))


def _planted(hippo: Hippo, db: str, count: int) -> None:
    """`count` memories written with hippod's store code while the daemon is stopped: a spread of
    ages, retrievals and outcome marks, some pinned, some long unused (the next sleep parks those)."""
    hippo.stop()
    rows = [
        make(
            _text(i),
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


def test_every_view_draws_counts_match_status_and_fits_a_phone(
    hippo: Hippo, browser: Browser, screens: Path
) -> None:
    hippo.start()
    folder, db = project(hippo)
    _planted(hippo, db, 60)
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
        assert all(s.stat().st_size > 0 for s in shots)

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
        assert page.locator("#view-search .result .retrievals").first.inner_text() == "retrieved 1 times"
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


def _listening_address(port: int) -> str:
    """The address a TCP port of this machine listens on, from /proc/net/tcp (hex, e.g. 0100007F)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if state == "0A" and int(hex_port, 16) == port:
            return address
    raise AssertionError(f"nothing listens on port {port}")


def test_only_reads_and_only_this_machine(hippo: Hippo) -> None:
    hippo.start()
    refused = hippo.ctl("dashboard", "--host", "0.0.0.0", "--no-open")
    assert refused.returncode == 2 and "--host" in refused.stderr
    reply = open_dashboard(hippo)
    url = reply["url"]
    assert _listening_address(reply["port"]) == "0100007F"  # 127.0.0.1, and no other address
    with httpx.Client() as client:
        assert client.get(url).status_code == 200
        assert client.get(f"{url}api/overview").json()["status"]["stores"][0]["kind"] == "global"
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            for path in ("", "api/overview", "api/search?q=x", "static/app.js", "nowhere"):
                answer = client.request(method, f"{url}{path}", content=b"{}")
                assert answer.status_code == 405, (method, path)
                assert answer.headers["allow"] == "GET, HEAD"
                assert answer.json()["code"] == "method_not_allowed"
        # A page of another site whose name resolves to this machine still sends its own name.
        rebound = client.get(f"{url}api/overview", headers={"Host": f"attacker.example:{reply['port']}"})
        assert rebound.status_code == 403
        assert (
            client.get(f"{url}api/overview", headers={"Host": f"localhost:{reply['port']}"}).status_code
            == 200
        )
        page = client.get(url)
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert client.get(f"{url}api/nothing").status_code == 404
        assert client.get(f"{url}api/map", params={"sort": "sideways"}).status_code == 400
        assert client.get(f"{url}api/map", params={"store": "/etc"}).status_code == 400


def test_open_again_stop_and_close_with_the_daemon(hippo: Hippo) -> None:
    hippo.start()
    assert hippo.json("daemon", "status")["dashboard"] is None
    assert "dashboard: off" in hippo.ok("daemon", "status").stdout
    first = open_dashboard(hippo, "--global")
    assert hippo.json("daemon", "status")["dashboard"] == first["url"]
    assert f"dashboard: {first['url']}" in hippo.ok("daemon", "status").stdout
    # Asked again (any port, or its own), the open dashboard answers; another port is refused.
    assert hippo.json("dashboard", "--no-open", "--global")["url"] == first["url"]
    assert (
        hippo.json("dashboard", "--no-open", "--port", str(first["port"]), "--global")["url"] == first["url"]
    )
    busy = hippo.ctl(
        "dashboard", "--no-open", "--port", str(first["port"] + 1 if first["port"] < 65535 else 1)
    )
    assert busy.returncode == 1 and "dashboard --stop" in busy.stderr

    # From a project, the same page shows that store too; its URL names it.
    folder, _ = project(hippo)
    again = open_dashboard(hippo, cwd=folder)
    root = os.path.join(folder, ".hippo")
    assert again["port"] == first["port"] and again["stores"] == [hippo.home, root]
    assert again["url"].endswith("?store=" + root.replace("/", "%2F"))
    with httpx.Client() as client:
        meta = client.get(f"{first['url']}api/meta").json()
        assert [s["root"] for s in meta["stores"]] == [hippo.home, root]
        shown = client.get(f"{first['url']}api/overview", params={"store": root}).json()
        assert [s["kind"] for s in shown["status"]["stores"]] == ["project", "global"]

    stopped = hippo.ok("dashboard", "--stop")
    assert stopped.stdout.strip() == f"Closed the dashboard on {first['url']}"
    assert hippo.json("daemon", "status")["dashboard"] is None
    assert _refused(first["url"])
    assert hippo.ok("dashboard", "--stop").stdout.strip() == "The dashboard was not open."
    assert hippo.ctl("dashboard", "--stop", "--no-open").returncode == 2

    reopened = open_dashboard(hippo)
    hippo.stop()
    assert _refused(reopened["url"])


def _refused(url: str) -> bool:
    try:
        httpx.get(url, timeout=10)
    except httpx.ConnectError:
        return True
    return False


def test_the_browser_is_opened_unless_no_open(hippo: Hippo) -> None:
    hippo.start()
    opened = os.path.join(hippo.root, "opened.txt")
    script = os.path.join(hippo.root, "browser.sh")
    Path(script).write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {shlex.quote(opened)}\n')
    os.chmod(script, 0o755)
    env = dict(hippo.env, BROWSER=script)
    done = hippo.ctl("dashboard", "--port", "0", "--global", env=env)
    assert done.returncode == 0, done.stderr
    url = done.stdout.split()[2]
    assert done.stdout.startswith(f"Dashboard on {url} (")
    assert hippo.wait_for(lambda: os.path.exists(opened), timeout=30)
    assert Path(opened).read_text().split() == [url]

    assert hippo.ctl("dashboard", "--no-open", "--global", env=env).returncode == 0
    assert Path(opened).read_text().split() == [url]  # --no-open opened nothing

    # No browser at all: the address is printed, and that is not a failure.
    missing = dict(hippo.env, BROWSER=os.path.join(hippo.root, "no-such-browser"), PATH="/nonexistent")
    done = hippo.ctl("dashboard", "--global", env=missing)
    assert done.returncode == 0, done.stderr
    assert url in done.stdout and f"open {url} in one" in done.stderr


def test_a_thousand_memories_page_without_shipping_them(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    _planted(hippo, db, 1000)
    reply = open_dashboard(hippo, cwd=folder)
    with httpx.Client(timeout=60) as client:
        answer = client.get(f"{reply['url']}api/map")
        data = answer.json()
        assert data["total"] == 1000 and data["pages"] == 20 and len(data["rows"]) == 50
        assert sum(sum(layer["histogram"]) for layer in data["layers"]) == 1000
        assert len(answer.content) < 64_000  # a page of rows and the figures, not the store
        weakest = [row["strength"] for row in data["rows"]]
        assert weakest == sorted(weakest)
        last = client.get(f"{reply['url']}api/map", params={"page": 1, "sort": "strongest"}).json()
        assert len(last["rows"]) == 50 and last["rows"][-1]["strength"] <= last["rows"][0]["strength"]
        assert (
            last["rows"][0]["strength"]
            <= client.get(f"{reply['url']}api/map", params={"page": 0, "sort": "strongest"}).json()["rows"][
                -1
            ]["strength"]
        )
        semantic = client.get(f"{reply['url']}api/map", params={"layer": "semantic"}).json()
        assert {row["layer"] for row in semantic["rows"]} == {"semantic"} and semantic["pages"] == 5
        fading = next(row for row in last["rows"] if row["protected"] is None and row["strength"] > 0.2)
        curves = client.get(f"{reply['url']}api/curves", params={"ids": fading["id"]}).json()
        (curve,) = curves["series"]
        values = [v for v in curve["points"] if v is not None]
        assert (
            values == sorted(values, reverse=True) and values[-1] < 0.05 < values[0]
        )  # down to the threshold
        pinned = client.get(f"{reply['url']}api/pinned").json()
        assert pinned["count"] == 40 and len(pinned["rows"]) == 40
    status = hippo.json("status", cwd=folder)["stores"][0]
    assert status["total"] == 1000


def test_a_daemon_that_never_opened_it_never_imported_it(hippo: Hippo) -> None:
    # Python names every module it imports on stderr; the daemon's stderr is kept in a file.
    hippo.env["PYTHONPROFILEIMPORTTIME"] = "1"
    hippo.start()
    hippo.ok("remember", "Staging deploys need the VPN", "--global")
    hippo.ok("recall", "staging", "--global")
    hippo.ok("status", "--global")
    hippo.ok("daemon", "status")
    hippo.ok("serve", "--port", "0")
    assert hippo.proc is not None

    def imported() -> set[str]:
        _, err = hippo.output(hippo.proc)  # type: ignore[arg-type]
        return {
            line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")
        }

    before = imported()
    assert "hippod.web.app" in before  # the probe sees what the daemon imports
    assert not {name for name in before if name.startswith("hippod.dashboard")}, before
    open_dashboard(hippo, "--global")
    assert hippo.wait_for(lambda: "hippod.dashboard.app" in imported(), timeout=30)


def test_the_reply_is_the_json_shape_scripts_read(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ok("--json", "dashboard", "--no-open", "--port", "0", "--global")
    reply = json.loads(done.stdout)
    assert set(reply) == {"running", "url", "port", "started_at", "store", "stores"}
    assert reply["store"] == hippo.home and reply["stores"] == [hippo.home]
    assert json.loads(hippo.ok("--json", "dashboard", "--stop").stdout)["running"] is False
