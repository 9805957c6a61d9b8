"""How one HTTP route runs: the table entry (`Op`), and the call it gets (`Call`), which checks the
caller, reads the body and the query, and runs a request through the daemon's one dispatcher."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippod.base.errors import HippoError, log_failure
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch, RequestContext
from hippod.store import workspaces
from hippod.web.auth import Authenticator, Principal, is_loopback
from hippod.web.errors import HttpError, error_body, from_hippo_error
from hippod.web.guard import MAX_BODY
from hippod.web.wire import ID_PATTERN, camel

log = logging.getLogger("hippod.web")

T = TypeVar("T")
ID = re.compile(ID_PATTERN)
ROLE_RANK = {"member": 1, "admin": 2}
# A JSON body nested deeper than the decoder's recursion allows (about 1,000 levels).
TOO_DEEP = "the body is nested too deep"


@dataclass(frozen=True)
class Param:
    """A query parameter, for the OpenAPI document."""

    name: str
    schema: dict[str, Any]
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Op:
    """One route: what it answers, who may call it, and its shapes (which make the OpenAPI document)."""

    method: str
    path: str
    run: Callable[[Call], Awaitable[Response]]
    summary: str
    role: str | None = "member"  # None: no key needed (health, signed webhooks)
    query: tuple[Param, ...] = ()
    body: type | None = None
    ok: tuple[int, Any] = (200, None)
    loopback_only: bool = False
    raw_body: bool = False  # webhooks: the signature covers the exact bytes


@dataclass
class HttpContext(RequestContext):
    """A request made over HTTP: the caller's tenant, its audit actor and its last-batch key."""

    principal: Principal = field(default_factory=lambda: Principal("default", "member"))

    @property
    def actor(self) -> str:
        return self.principal.actor

    @property
    def session_key(self) -> str:
        return self.principal.session

    @property
    def owner(self) -> bool:
        return self.principal.key_id is None


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(msgspec.json.encode(data), status, headers, media_type="application/json")


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(error_body(code, message), status, headers, media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(404, "not_found", f"no route {request.method} {request.url.path}")
    if exc.status_code == 405:
        message = f"{request.url.path} does not answer {request.method}"
        return error_response(405, "method_not_allowed", message, dict(exc.headers or {}))
    return error_response(exc.status_code, "bad_request", str(exc.detail))


async def _internal(request: Request, exc: Exception) -> Response:
    """What escaped a route (the routes catch their own failures): logged by type, answered in shape."""
    log_failure(f"{request.method} {request.url.path}", exc)
    return error_response(500, "internal", "internal error; the daemon's log has the details")


def exception_handlers() -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    """starlette's exception handlers of every listener: routing misses and escaped failures
    answered in the one error shape (coroutines: starlette runs a plain function in a thread)."""
    return {HTTPException: _http_error, Exception: _internal}


class Call:
    """One request to one route, as its handler function sees it."""

    def __init__(
        self, request: Request, state: DaemonView, dispatch: Dispatch, principal: Principal | None
    ) -> None:
        self.request = request
        self.state = state
        self.dispatch = dispatch
        self._principal = principal

    @property
    def principal(self) -> Principal:
        assert self._principal is not None, "a route that needs no key has no caller"
        return self._principal

    # --- input ---------------------------------------------------------------------------------------

    def path_id(self, name: str = "id") -> str:
        value = str(self.request.path_params[name])
        if not ID.match(value):
            raise HttpError(400, "bad_request", f"{name} must be 1 to 256 of A-Z a-z 0-9 _ : . -")
        return value

    def path_number(self, name: str = "n") -> int:
        """A row number from the path (its route's `{n:int}` has made it one)."""
        return int(self.request.path_params[name])

    def query_str(self, name: str, max_chars: int = 4096) -> str | None:
        """A query parameter as given (None when absent; an empty one stays "", for the checks)."""
        value = self.request.query_params.get(name)
        if value is None:
            return None
        if len(value) > max_chars or "\x00" in value:
            raise HttpError(400, "bad_request", f"{name} must be at most {max_chars} characters, without NUL")
        return value

    def query_text(self, name: str, max_chars: int = 4096) -> str | None:
        """A free-text query parameter: None when absent or empty."""
        return self.query_str(name, max_chars) or None

    def query_int(self, name: str, low: int, high: int) -> int | None:
        value = self.query_str(name, 32)
        if value is None:
            return None
        if not re.fullmatch(r"-?\d+", value) or not low <= int(value) <= high:
            raise HttpError(400, "bad_request", f"{name} must be a whole number from {low} to {high}")
        return int(value)

    def query_flag(self, name: str) -> bool:
        value = self.query_str(name, 8)
        if value is None:
            return False
        if value.lower() not in ("1", "true", "0", "false"):
            raise HttpError(400, "bad_request", f"{name} must be true or false")
        return value.lower() in ("1", "true")

    async def raw(self) -> bytes:
        """The body, at most 1 MiB (a chunked body has no Content-Length for the guard to check)."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in self.request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise HttpError(413, "payload_too_large", "the request body is over 1 MiB")
            chunks.append(chunk)
        return b"".join(chunks)

    async def body(self, kind: type[T]) -> T:
        """The JSON body as `kind`; snake_case names are taken for their camelCase form too."""
        raw = await self.raw()
        try:
            data = msgspec.json.decode(raw) if raw.strip() else {}
        except msgspec.DecodeError:
            raise HttpError(400, "bad_request", "the body is not JSON") from None
        except RecursionError:
            raise HttpError(400, "bad_request", TOO_DEEP) from None
        if not isinstance(data, dict):
            raise HttpError(400, "bad_request", "the body must be a JSON object")
        data = {camel(k): v for k, v in data.items() if camel(k) == k or camel(k) not in data}
        try:
            return msgspec.convert(data, kind)
        except msgspec.ValidationError as exc:
            raise HttpError(400, "bad_request", f"invalid body: {exc}") from None

    # --- running a request through the daemon --------------------------------------------------------

    def context(self, body: m.RequestBody) -> HttpContext:
        """The request as a handler sees it: the caller's tenant, in the store X-Hippo-Store names
        (a registered workspace) or else the global store."""
        named = self.request.headers.get("x-hippo-store")
        global_root = self.state.registry.global_root
        if named:
            if not os.path.isabs(named) or "\x00" in named:
                raise HttpError(400, "bad_request", "X-Hippo-Store must be an absolute project folder")
            root = workspaces.normalise(named, "/")
            registered, _ = workspaces.read_or_empty(global_root)
            if root not in registered or not workspaces.describe(root).has_store:
                raise HttpError(
                    400,
                    "bad_request",
                    f"{named} is not a registered workspace with a store (see: hippoctl workspaces list)",
                )
            cwd, global_store = root, False
        elif self.state.http is not None and self.state.http.project is not None:
            cwd, global_store = self.state.http.project, False
        else:
            cwd, global_store = "/", True
        request = m.Request(id=0, cwd=cwd, body=body, tenant=self.principal.tenant, global_store=global_store)
        return HttpContext(request=request, state=self.state, principal=self.principal)

    async def run(self, body: m.RequestBody) -> Any:
        """Run one request through the dispatcher; returns its reply data once what it left to write
        after its reply (recall's strengthening) is in, so an HTTP response follows its effects."""
        data, _text = await self.dispatch(self.context(body))
        await self.state.registry.settled()
        return data


def endpoint(
    op: Op, state: DaemonView, dispatch: Dispatch, authenticator: Authenticator
) -> Callable[[Request], Awaitable[Response]]:
    """The starlette endpoint of one route: the caller checked, then the route run, every failure
    answered in the one error shape."""

    async def checked(request: Request) -> Response:
        principal = None
        client = request.client.host if request.client else None
        if op.loopback_only and not is_loopback(client):
            raise HttpError(403, "forbidden", f"{op.path} answers only requests from this machine")
        if op.role is not None:
            principal = await authenticator.principal(request.scope, request.headers.getlist("authorization"))
            if ROLE_RANK[principal.role] < ROLE_RANK[op.role]:
                raise HttpError(403, "forbidden", f"{op.method} {op.path} needs the {op.role} role")
        return await op.run(Call(request, state, dispatch, principal))

    async def run(request: Request) -> Response:
        return await answered(f"{op.method} {op.path}", checked(request))

    return run


async def answered(what: str, running: Awaitable[Response]) -> Response:
    """A route's response, or its failure answered in the one error shape; `what` names the route
    in the daemon's log."""
    try:
        return await running
    except HttpError as exc:
        return error_response(exc.status, exc.code, exc.message, exc.headers)
    except ClientDisconnect:
        # Nobody is left to answer, and nothing went wrong here: no traceback for a walkout.
        log.debug("%s: the client went away before its body was complete", what)
        return error_response(400, "bad_request", "the connection closed before the body was complete")
    except HippoError as exc:
        status, body = from_hippo_error(exc)
        if status >= 500:
            log.warning("%s answered %d: %s", what, status, exc.code)
        return Response(body, status, media_type="application/json")
    except Exception as exc:
        log_failure(what, exc)
        return error_response(500, "internal", "internal error; the daemon's log has the details")
