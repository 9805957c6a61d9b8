"""The stored strength is a cache: a sleep writes it once it lags the live value by
decay.CACHE_DRIFT, and readers (here the HTTP API's one-memory read and the JSON export) give the
live value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from e2e.http_support import serve
from hippod.model.decay import CACHE_DRIFT

if TYPE_CHECKING:
    from e2e.harness import Hippo

# A 365-day half-life: a day later the live strength is 0.5 ** (1/365), 0.0019 below the cache of
# 1.0 a new memory has; thirty days later 0.5 ** (30/365), 0.055 below.
T0 = "2026-01-01T00:00:00Z"
DAY_LATER = "2026-01-02T00:00:00Z"
MONTH_LATER = "2026-01-31T00:00:00Z"


def _cached(hippo: Hippo, memory_id: str) -> float:
    return float(hippo.json("inspect", memory_id, "--global")["memory"]["strength"])


def test_a_sleep_writes_a_cache_once_it_lags_and_the_http_read_is_live(hippo: Hippo) -> None:
    assert 1.0 - 0.5 ** (1 / 365) < CACHE_DRIFT <= 1.0 - 0.5 ** (30 / 365)
    # No replay: it would strengthen the store's one memory and set its cache to 1.0 again.
    Path(hippo.home).mkdir(parents=True, exist_ok=True)
    Path(hippo.home, "config.json").write_text(json.dumps({"replay": {"count": 0}}), encoding="utf-8")
    hippo.start(fake_now=T0)
    memory_id = hippo.json("remember", "Blue cluster jobs need swap turned on", "--global")["id"]
    assert _cached(hippo, memory_id) == 1.0
    assert hippo.stop() == 0

    url = serve(hippo, HIPPO_FAKE_NOW=DAY_LATER)
    hippo.ok("sleep", "--global", "--no-learn")
    assert _cached(hippo, memory_id) == 1.0  # a day's decay: below the drift, not written
    read = httpx.get(f"{url}/v1/memories/{memory_id}", timeout=60)
    assert read.status_code == 200, read.text
    assert read.json()["strength"] == pytest.approx(0.5 ** (1 / 365), abs=1e-4)
    [record] = json.loads(hippo.ok("export", "--format", "json", "--global").stdout)["memories"]
    assert record["id"] == memory_id and record["strength"] == round(0.5 ** (1 / 365), 4)
    assert hippo.stop() == 0

    hippo.start(fake_now=MONTH_LATER)
    hippo.ok("sleep", "--global", "--no-learn")
    assert _cached(hippo, memory_id) == pytest.approx(0.5 ** (30 / 365), abs=1e-4)
