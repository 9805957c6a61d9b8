"""A local stand-in for the paid model APIs hippod can call (Anthropic's Messages API; the
embedding and rerank APIs of OpenAI, Voyage and Cohere), on 127.0.0.1, answering in each API's
documented request and reply shapes, error shapes included. Point the daemon at it with
`stub.env()` (the providers' base-URL variables and keys).

A test says what the next answers are: `answer(path, body)` queues a 200 reply for `path`, and
`fail(path, status, error_body, headers)` queues an error; `hang(path, seconds)` answers late. An
unqueued request to a path with a default handler (`serve(path, fn)`) gets `fn(request_json)`;
anything else is a 404 in the provider's shape. Every request is recorded, with its headers."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-stub",
    "OPENAI_API_KEY": "sk-openai-stub",
    "VOYAGE_API_KEY": "pa-voyage-stub",
    "CO_API_KEY": "co-stub",
}


@dataclass
class Seen:
    """A request the stub received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Planned:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    """The Messages API's error body: `{"type": "error", "error": {"type", "message"}}`."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def anthropic_message(
    text: str, *, model: str = "claude-sonnet-4-6", tokens: tuple[int, int] = (50, 20)
) -> dict[str, Any]:
    """A Messages API reply holding one text block."""
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
    }


class ModelStub:
    """The stub server, started on construction; `close()` stops it."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._planned: dict[str, deque[_Planned]] = defaultdict(deque)
        self._handlers: dict[str, Callable[[Any], Any]] = {}
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                stub._handle(self)

            def do_GET(self) -> None:
                stub._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # close() waits for every answer under way, so none is left running into later tests; a
        # planned delay ends early when the stub closes.
        self._server.daemon_threads = False
        self._closing = threading.Event()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def env(self) -> dict[str, str]:
        """The daemon environment that sends every provider's calls here, with a key each."""
        return {
            **KEYS,
            "ANTHROPIC_BASE_URL": self.url,
            "OPENAI_BASE_URL": f"{self.url}/v1",
            "VOYAGE_BASE_URL": f"{self.url}/v1",
            "CO_API_URL": self.url,
        }

    def serve(self, path: str, handler: Callable[[Any], Any]) -> None:
        """Answer every unplanned request to `path` with 200 and `handler(request JSON)`."""
        with self._lock:
            self._handlers[path] = handler

    def answer(self, path: str, body: Any, *, delay_s: float = 0.0) -> None:
        with self._lock:
            self._planned[path].append(_Planned(200, body, delay_s=delay_s))

    def fail(self, path: str, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        with self._lock:
            self._planned[path].append(_Planned(status, body, headers or {}))

    def hang(self, path: str, seconds: float) -> None:
        """The next request to `path` waits `seconds`, then gets its planned or default answer."""
        with self._lock:
            self._planned[path].appendleft(_Planned(0, None, delay_s=seconds))

    def requests(self, path: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if path is None or s.path == path]

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        size = int(request.headers.get("content-length") or 0)
        raw = request.rfile.read(size) if size else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = request.path.split("?", 1)[0]
        with self._lock:
            self.seen.append(
                Seen(request.command, path, {k.lower(): v for k, v in request.headers.items()}, body)
            )
            planned = self._planned[path].popleft() if self._planned[path] else None
            if planned is not None and planned.status == 0:
                # A hang: wait, then answer as if it were not planned.
                delay = planned.delay_s
                planned = self._planned[path].popleft() if self._planned[path] else None
                if planned is not None:
                    planned.delay_s += delay
                else:
                    planned = _Planned(-1, None, delay_s=delay)
            handler = self._handlers.get(path)
        if planned is not None and planned.delay_s:
            self._closing.wait(planned.delay_s)
        if planned is None or planned.status == -1:
            if handler is None:
                status, reply, headers = (
                    404,
                    {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}},
                    {},
                )
            else:
                status, reply, headers = 200, handler(body), {}
        else:
            status, reply, headers = planned.status, planned.body, planned.headers
        data = json.dumps(reply).encode()
        try:
            request.send_response(status)
            request.send_header("content-type", "application/json")
            request.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(data)
        except OSError:
            pass  # the client gave up (its timeout), as a real client would


# The embedding and rerank APIs' paths under the stub's base URLs (stub.env()).
OPENAI_EMBED = "/v1/embeddings"
VOYAGE_EMBED = "/v1/embeddings"
COHERE_EMBED = "/v2/embed"
VOYAGE_RERANK = "/v1/rerank"
COHERE_RERANK = "/v2/rerank"


def stub_vector(text: str, dim: int = 8) -> list[float]:
    """A vector made from a text's bytes, the same every time for the same text (not normalised,
    as the APIs' are not promised to be)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i] - 127.5) / 64.0 for i in range(dim)]


def openai_embeddings(request: dict[str, Any], dim: int = 8) -> dict[str, Any]:
    """OpenAI's `POST /v1/embeddings` reply to `request` ({"model", "input": [...], ...})."""
    texts = request["input"]
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": stub_vector(t, dim)} for i, t in enumerate(texts)
        ],
        "model": request["model"],
        "usage": {
            "prompt_tokens": sum(len(t.split()) for t in texts),
            "total_tokens": sum(len(t.split()) for t in texts),
        },
    }


def voyage_embeddings(request: dict[str, Any], dim: int = 8) -> dict[str, Any]:
    """Voyage's `POST /v1/embeddings` reply ({"input": [...], "model", "input_type"})."""
    texts = request["input"]
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "embedding": stub_vector(t, dim), "index": i} for i, t in enumerate(texts)
        ],
        "model": request["model"],
        "usage": {"total_tokens": sum(len(t.split()) for t in texts)},
    }


def cohere_embed(request: dict[str, Any], dim: int = 8) -> dict[str, Any]:
    """Cohere's `POST /v2/embed` reply ({"model", "texts", "input_type", "embedding_types"})."""
    texts = request["texts"]
    return {
        "id": "emb-stub",
        "embeddings": {"float": [stub_vector(t, dim) for t in texts]},
        "texts": texts,
        "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": len(texts)}},
        "response_type": "embeddings_by_type",
    }


def _scores(request: dict[str, Any], score: Callable[[str], float]) -> list[dict[str, Any]]:
    found = [{"index": i, "relevance_score": score(d)} for i, d in enumerate(request["documents"])]
    return sorted(found, key=lambda r: -r["relevance_score"])


def cohere_rerank(request: dict[str, Any], score: Callable[[str], float]) -> dict[str, Any]:
    """Cohere's `POST /v2/rerank` reply ({"model", "query", "documents", "top_n"}): the documents'
    `score(text)`, best first, at most top_n."""
    results = _scores(request, score)[: request.get("top_n") or None]
    return {
        "id": "rerank-stub",
        "results": results,
        "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
    }


def voyage_rerank(request: dict[str, Any], score: Callable[[str], float]) -> dict[str, Any]:
    """Voyage's `POST /v1/rerank` reply ({"query", "documents", "model", "top_k"})."""
    return {
        "object": "list",
        "data": _scores(request, score)[: request.get("top_k") or None],
        "model": request["model"],
        "usage": {"total_tokens": sum(len(d.split()) for d in request["documents"])},
    }


def openai_error(
    message: str, kind: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def voyage_error(detail: str) -> dict[str, Any]:
    """Voyage's error body."""
    return {"detail": detail}


def cohere_error(message: str) -> dict[str, Any]:
    """Cohere's error body."""
    return {"id": "err-stub", "message": message}
