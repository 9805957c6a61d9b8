"""The model API client's retries and failures, against the local stub answering in Anthropic's
shapes: a 429 waits its retry-after, an overloaded 529 is tried again, a refused key is not, a
timeout is named, and a missing key is a one-line error naming the variable."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from model_stub import KEYS, ModelStub, anthropic_error, anthropic_message

from hippod.base.errors import HippoError
from hippod.remote import anthropic
from hippod.remote.http import Caller, Policy, api_message
from hippod.remote.providers import ANTHROPIC, COHERE

PATH = "/v1/messages"


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelStub]:
    server = ModelStub()
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    yield server
    server.close()


async def _ask(policy: Policy | None = None) -> anthropic.Reply:
    async with Caller(ANTHROPIC, KEYS["ANTHROPIC_API_KEY"], policy or Policy(backoff_s=0.01)) as caller:
        return await anthropic.message(caller, model="claude-sonnet-4-6", system="s", user="u", max_tokens=64)


async def test_a_reply_is_read_with_its_usage_and_the_request_has_the_documented_headers(
    stub: ModelStub,
) -> None:
    stub.answer(PATH, anthropic_message("Use pnpm.", tokens=(120, 7)))
    reply = await _ask()
    assert (reply.text, reply.input_tokens, reply.output_tokens) == ("Use pnpm.", 120, 7)
    [seen] = stub.requests(PATH)
    assert seen.headers["x-api-key"] == KEYS["ANTHROPIC_API_KEY"]
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.body["messages"] == [{"role": "user", "content": "u"}]
    assert seen.body["max_tokens"] == 64


async def test_a_429_waits_its_retry_after_then_succeeds(stub: ModelStub) -> None:
    stub.fail(PATH, 429, anthropic_error("rate_limit_error", "slow down"), {"retry-after": "1"})
    stub.answer(PATH, anthropic_message("ok"))
    started = time.monotonic()
    assert (await _ask()).text == "ok"
    assert time.monotonic() - started >= 1.0
    assert len(stub.requests(PATH)) == 2


async def test_overloaded_is_retried_and_named_when_it_stays(stub: ModelStub) -> None:
    for _ in range(3):
        stub.fail(PATH, 529, anthropic_error("overloaded_error", "Overloaded"))
    with pytest.raises(HippoError) as failed:
        await _ask()
    assert failed.value.message == (
        "Anthropic API: HTTP 529 (overloaded, still after retries): overloaded_error: Overloaded"
    )
    assert len(stub.requests(PATH)) == 3


async def test_a_refused_key_is_not_retried(stub: ModelStub) -> None:
    stub.fail(PATH, 401, anthropic_error("authentication_error", "invalid x-api-key"))
    with pytest.raises(HippoError) as failed:
        await _ask()
    assert "HTTP 401 (the key was refused): authentication_error: invalid x-api-key" in failed.value.message
    assert len(stub.requests(PATH)) == 1


async def test_a_timeout_is_named(stub: ModelStub) -> None:
    stub.hang(PATH, 1.5)
    stub.answer(PATH, anthropic_message("late"))
    with pytest.raises(HippoError) as failed:
        await _ask(Policy(timeout_s=0.3, retries=0))
    assert failed.value.message == "Anthropic API: no answer within 0.3 s"


def test_a_missing_key_names_its_variable() -> None:
    with pytest.raises(HippoError) as failed:
        COHERE.require_key({}, purpose="the cohere embedder")
    assert failed.value.code == "model_key_missing"
    assert (
        failed.value.message
        == "the cohere embedder needs CO_API_KEY in the daemon's environment, and it is not set"
    )
    assert COHERE.require_key({"COHERE_API_KEY": " k "}, purpose="x") == "k"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
            "invalid_request_error: bad",
        ),
        (
            {"error": {"message": "Incorrect API key", "type": "invalid_request_error", "code": "x"}},
            "invalid_request_error: Incorrect API key",
        ),
        ({"detail": "Provided API key is invalid."}, "Provided API key is invalid."),
        ({"message": "invalid api token"}, "invalid api token"),
        (["not", "an", "object"], ""),
    ],
)
def test_each_providers_error_shape_gives_its_message(body: object, message: str) -> None:
    assert api_message(body) == message
