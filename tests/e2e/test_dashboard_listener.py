"""The dashboard's listener without a browser (integrations.md §13): only reads, only from this
machine, opened again, stopped, closed with the daemon, the browser opened or the address printed,
paged at 1,000 memories, and never imported by a daemon that did not open it."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from e2e.dashboard_support import open_dashboard, planted
from e2e.sleep_support import project

if TYPE_CHECKING:
    from e2e.harness import Hippo


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
    planted(hippo, db, 1000)
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
