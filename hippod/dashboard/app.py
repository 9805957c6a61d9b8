"""The dashboard as one starlette app: the page, its static files (the vendored chart library too),
and one JSON route per view; read-only and loopback-only through the same guard as the HTTP API."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hippod import __version__
from hippod.base import local_token
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.dashboard import views_activity, views_cards, views_graph, views_memories
from hippod.dashboard.calls import Stores, ViewCall
from hippod.web import local_caller
from hippod.web.auth import bearer
from hippod.web.errors import HttpError
from hippod.web.guard import Guard
from hippod.web.routing import answered, error_response, exception_handlers, json_response

log = logging.getLogger("hippod.dashboard")

STATIC = Path(__file__).parent / "static"
View = Callable[[ViewCall], Awaitable[Any]]
VIEWS: dict[str, View] = {
    "overview": views_memories.overview,
    "map": views_memories.memory_map,
    "curves": views_memories.curves,
    "pinned": views_memories.pinned,
    "dormant": views_memories.dormant,
    "conflicts": views_activity.conflicts,
    "sleeps": views_activity.sleeps,
    "tokens": views_activity.tokens,
    "cards": views_cards.board,
    "graph": views_graph.graph,
    "search": views_activity.search,
}
# The page runs only its own files: no inline script, nothing from elsewhere, never inside a frame.
HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-cache"),
]


def _with_headers(app: ASGIApp) -> ASGIApp:
    async def run(scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await app(scope, receive, sending)

    return run


async def _json(
    run: View, request: Request, state: DaemonView, dispatch: Dispatch, stores: Stores
) -> Response:
    # The call checks the query as it is made: inside `answered`, so a bad value answers 400.
    return json_response(await run(ViewCall(request, state, dispatch, stores)))


async def _checked(
    request: Request, token: local_token.LocalToken, respond: Callable[[], Awaitable[Response]]
) -> Response:
    """`respond`, for the daemon's own user alone (`_check_caller`)."""
    _check_caller(request, token)
    return await respond()


def _check_caller(request: Request, token: local_token.LocalToken) -> None:
    """The page's data is memory text: it goes to the user who owns the daemon alone, proven by the
    connection (local_caller) or by the local token the page was opened with (the URL's #token=,
    which the page sends back as a Bearer credential)."""
    given = bearer(request.headers.get("authorization", ""))
    if given is not None:
        if not token.matches(given):
            raise HttpError(401, "unauthorized", "invalid local token", {"WWW-Authenticate": "Bearer"})
        return
    refused = local_caller.refusal(request.scope, token.file)
    if refused is not None:
        raise refused


def build(state: DaemonView, dispatch: Dispatch, stores: Stores, token: local_token.LocalToken) -> ASGIApp:
    """The whole dashboard, ready for uvicorn; `token` is the local token (base/local_token.py), and
    `dispatch` runs the verbs some views show."""

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    home = state.registry.global_root

    async def described() -> Response:
        listed = [{"root": r, "kind": "global" if r == home else "project"} for r in stores.roots]
        return json_response({"version": __version__, "tenant": stores.tenant, "stores": listed})

    async def meta(request: Request) -> Response:
        return await answered("dashboard /api/meta", _checked(request, token, described))

    async def view(request: Request) -> Response:
        run = VIEWS.get(request.path_params["name"])
        if run is None:
            return error_response(404, "not_found", f"no view {request.path_params['name']}")
        checked = _checked(request, token, lambda: _json(run, request, state, dispatch, stores))
        return await answered(f"dashboard {request.url.path}", checked)

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/api/meta", meta, methods=["GET"]),
        Route("/api/{name}", view, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers=exception_handlers(),
        middleware=[Middleware(GZipMiddleware, minimum_size=1024)],
    )
    # No rate limit: one person's browser on this machine, and nothing it asks changes anything.
    return Guard(_with_headers(app), rate=0, read_only=True)
