"""The HTTP API as one starlette app: every route of the tables in routes_*.py, the guard in front,
and the OpenAPI document made from the same tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.web import (
    openapi,
    routes_admin,
    routes_cards,
    routes_context,
    routes_decisions,
    routes_graph,
    routes_memories,
    routes_team,
    webhooks,
)
from hippod.web.auth import Authenticator
from hippod.web.guard import Guard, rate_from_env
from hippod.web.mcp_door import METHODS, PATH, McpDoor
from hippod.web.routing import Op, endpoint, error_response, exception_handlers

# The SDK's other object families: hippod does not keep these, and says so plainly.
UNSUPPORTED = (
    "predictions",
    "incidents",
    "processes",
    "policies",
    "skills",
    "project-briefs",
    "customer-notes",
)
OPS: tuple[Op, ...] = (
    *routes_admin.OPS,
    *routes_memories.OPS,
    *routes_context.OPS,
    *routes_decisions.OPS,
    *routes_graph.OPS,
    *routes_cards.OPS,
    *routes_team.OPS,
    *webhooks.OPS,
)


async def _unsupported(request: Request) -> Response:
    family = request.url.path.split("/")[2]
    return error_response(
        501, "not_implemented", f"/v1/{family} is not available in hippod: it keeps memories and decisions"
    )


def build(
    state: DaemonView, dispatch: Dispatch, authenticator: Authenticator, mcp: McpDoor | None = None
) -> Guard:
    """The whole app, ready for uvicorn; each route's request runs through `dispatch`, and `/mcp`'s
    through `mcp` (none: that route is not served)."""
    routes: list[BaseRoute] = []
    by_path: dict[str, list[Op]] = {}
    for op in OPS:
        by_path.setdefault(op.path, []).append(op)
    for path, ops in by_path.items():
        routes.append(
            Route(path, _by_method(ops, state, dispatch, authenticator), methods=[op.method for op in ops])
        )
    document = msgspec.json.encode(openapi.document(OPS, UNSUPPORTED))

    async def published(request: Request) -> Response:
        return Response(document, media_type="application/json")

    routes.append(Route("/openapi.json", published, methods=["GET"]))
    if mcp is not None:
        routes.append(Route(PATH, mcp, methods=METHODS))
    for family in UNSUPPORTED:
        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        routes.append(Route(f"/v1/{family}", _unsupported, methods=methods))
        routes.append(Route(f"/v1/{family}/{{rest:path}}", _unsupported, methods=methods))
    app = Starlette(routes=routes, exception_handlers=exception_handlers())
    return Guard(app, rate_from_env())


def _by_method(
    ops: list[Op], state: DaemonView, dispatch: Dispatch, authenticator: Authenticator
) -> Callable[[Request], Awaitable[Response]]:
    """One endpoint for a path that answers several methods."""
    runs = {op.method: endpoint(op, state, dispatch, authenticator) for op in ops}

    async def run(request: Request) -> Response:
        # starlette answers HEAD on every GET route: the GET endpoint serves it.
        method = "GET" if request.method == "HEAD" else request.method
        return await runs[method](request)

    return run
