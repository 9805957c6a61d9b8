"""schemathesis against the OpenAPI document the live daemon serves: generated and mutated requests
to every route, each answer checked against the document, and no 500 among them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from e2e.http_support import serve

if TYPE_CHECKING:
    from e2e.harness import Hippo

FUZZ = Path(__file__).parent / "fuzz"
# Small enough for the suite's budget; the seed makes a failure reproducible.
EXAMPLES = "8"
SEED = "20261202"


def test_the_openapi_document_describes_every_route(hippo: Hippo) -> None:
    url = serve(hippo)
    document = httpx.get(f"{url}/openapi.json").json()
    paths = document["paths"]
    assert document["openapi"].startswith("3.1")
    for route in (
        "/v1/memories",
        "/v1/memories/{id}",
        "/v1/outcome",
        "/v1/context",
        "/v1/sleep",
        "/v1/auth/keys",
    ):
        assert route in paths, route
    assert set(paths["/v1/memories"]) == {"get", "post"}
    assert paths["/v1/memories"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]


@pytest.mark.long
def test_schemathesis_finds_no_500(hippo: Hippo, tmp_path: Path) -> None:
    # Secrets set, so the webhooks answer 401 to unsigned fuzz rather than 503.
    url = serve(hippo, SLACK_SIGNING_SECRET="fuzz-secret", GITHUB_WEBHOOK_SECRET="fuzz-secret")
    st = shutil.which("st", path=os.path.dirname(sys.executable))
    assert st is not None, "schemathesis's st is not installed beside this Python (the test extra has it)"
    env = dict(os.environ, SCHEMATHESIS_HOOKS="hippod_checks", PYTHONPATH=str(FUZZ))
    done = subprocess.run(
        [
            st,
            "run",
            f"{url}/openapi.json",
            "--checks",
            "no_internal_error,response_schema_conformance,content_type_conformance,status_code_conformance",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--max-examples",
            EXAMPLES,
            "--seed",
            SEED,
            "--generation-database",
            "none",
            "--no-color",
            "--workers",
            "1",
            "--exclude-path-regex",
            "^/v1/(predictions|incidents|processes|policies|skills|project-briefs|customer-notes)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    summary = done.stdout[-4000:]
    assert done.returncode == 0, summary
    generated = re.search(r"(\d+) generated", done.stdout)
    assert generated is not None and int(generated.group(1)) > 500, summary
    assert "Traceback" not in Path(hippo.log).read_text(encoding="utf-8")
