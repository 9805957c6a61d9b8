"""The dashboard's graph view in a real browser: the entities of a real store drawn as nodes, and a
node's link focusing on it and its neighbours."""

from __future__ import annotations

from typing import TYPE_CHECKING

from playwright.sync_api import Browser

from e2e.dashboard_support import DESKTOP, PHONE, browser, open_dashboard, overflow, show

if TYPE_CHECKING:
    from e2e.harness import Hippo

__all__ = ["browser"]  # a module-scoped fixture, used by name


def test_the_graph_view_draws_the_stores_entities(hippo: Hippo, browser: Browser) -> None:
    hippo.start()
    hippo.ok("remember", "PaymentGateway keeps its retry budget in src/pay/limits.py")
    hippo.ok(
        "remember", "Raise the ceiling in src/pay/limits.py before the holidays", "--tag", "entity:billing"
    )
    hippo.ok("decide", "Route card payments through PaymentGateway only")
    hippo.ok("remember", "Staging deploys need the VPN up first")  # names nothing
    entities = hippo.json("graph")["nodes"]
    assert len(entities) == 4
    reply = open_dashboard(hippo)

    page = browser.new_page(viewport=DESKTOP)
    try:
        show(page, reply["url"], "graph")
        drawn = page.locator("#view-graph svg.graph .node")
        assert drawn.count() == len(entities)
        shown = {(n.get_attribute("data-type"), n.locator("title").text_content()) for n in drawn.all()}
        assert shown == {
            (e["type"], f"{e['type']}: {e['name']} ({e['memories']} memories)") for e in entities
        }
        assert page.locator("#view-graph svg.graph line.edge").count() == len(hippo.json("graph")["edges"])
        # Every node sits inside the drawing.
        for node in drawn.all():
            x, y = map(float, node.get_attribute("transform")[len("translate(") : -1].split(","))
            assert 0 <= x <= 1000 and 0 <= y <= 640

        page.locator("#view-graph .scroll a", has_text="billing").click()
        page.wait_for_selector("#view-graph[data-state=ready] .muted:has-text('and its neighbours')")
        focused = {n.get_attribute("data-type") for n in page.locator("#view-graph svg.graph .node").all()}
        assert focused == {"entity", "file"}  # billing, and src/pay/limits.py named with it
    finally:
        page.close()

    phone = browser.new_page(viewport=PHONE)
    try:
        show(phone, reply["url"], "graph")
        assert overflow(phone) <= 0
    finally:
        phone.close()
