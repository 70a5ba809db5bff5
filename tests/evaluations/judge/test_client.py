"""The chat-completions client: retry policy and error classes, on a fake clock (no real sleeping)."""
from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.utils import format_datetime

import httpx
import pytest

from evaluations.judge.client import LLMClient, parse_retry_after
from evaluations.judge.config import RetryPolicy
from evaluations.judge.errors import ErrorClass

OK_BODY = {
    "model": "google/gemini-3-flash-preview",
    "choices": [{"message": {"role": "assistant", "content": '{"scores": []}'}}],
    "usage": {"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.000123},
}


class FakeClock:
    """Injected sleep and now: sleeping advances the fake time and records the delay."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=seconds)

    def utcnow(self) -> datetime:
        return self.now


def scripted(*replies: httpx.Response | Exception):
    """A transport answering with the given responses (or raising the given errors) in order."""
    calls: list[httpx.Request] = []
    queue = list(replies)

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return httpx.MockTransport(handler), calls


def run_chat(transport: httpx.MockTransport, clock: FakeClock, **kwargs):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        async with LLMClient(base_url="https://llm.example/api/v1", api_key="sk-test", transport=transport,
                             sleep=clock.sleep, now=clock.utcnow, **kwargs) as client:
            return await client.chat({"model": "m", "messages": []})

    started = time.monotonic()
    result = asyncio.run(go())
    assert time.monotonic() - started < 2, "the client slept for real"
    return result


def status(code: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(code, headers=headers or {}, json={"error": {"message": "x", "code": code}})


def test_backoff_schedule_is_one_two_four_seconds_capped_at_sixty():
    policy = RetryPolicy()
    assert (policy.attempts, policy.initial, policy.multiplier, policy.cap) == (3, 1.0, 2.0, 60.0)
    assert [policy.backoff(n) for n in (1, 2, 3, 4, 7, 20)] == [1, 2, 4, 8, 60, 60]


def test_429s_are_retried_with_backoff_until_success_within_three_attempts():
    clock = FakeClock()
    transport, calls = scripted(status(429), status(429), httpx.Response(200, json=OK_BODY))
    result = run_chat(transport, clock)
    assert result.ok and result.attempts == 3 and len(calls) == 3
    assert clock.sleeps == [1.0, 2.0]
    assert calls[0].url == "https://llm.example/api/v1/chat/completions"
    assert calls[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize("code, error_class", [(500, ErrorClass.SERVER_ERROR), (503, ErrorClass.SERVER_ERROR),
                                               (429, ErrorClass.RATE_LIMITED), (408, ErrorClass.TIMEOUT)])
def test_retryable_statuses_fail_after_exactly_three_attempts(code, error_class):
    clock = FakeClock()
    transport, calls = scripted(status(code))
    result = run_chat(transport, clock)
    assert not result.ok and result.error_class == error_class and result.http_status == code
    assert result.attempts == 3 and len(calls) == 3
    assert clock.sleeps == [1.0, 2.0]


def test_a_fourth_attempt_would_wait_four_seconds():
    clock = FakeClock()
    transport, calls = scripted(status(503))
    run_chat(transport, clock, retry=RetryPolicy(attempts=4))
    assert clock.sleeps == [1.0, 2.0, 4.0] and len(calls) == 4


@pytest.mark.parametrize("header, expected", [("7", 7.0), ("0", 0.0), ("2.5", 2.5), ("120", 60.0)])
def test_retry_after_seconds_is_honoured_and_capped_at_sixty(header, expected):
    clock = FakeClock()
    transport, _ = scripted(status(429, {"Retry-After": header}), httpx.Response(200, json=OK_BODY))
    result = run_chat(transport, clock)
    assert result.ok and clock.sleeps == [expected]


def test_retry_after_http_date_is_honoured_relative_to_the_injected_clock():
    clock = FakeClock()
    when = format_datetime(clock.now + timedelta(seconds=9), usegmt=True)
    far = format_datetime(clock.now + timedelta(hours=2), usegmt=True)
    transport, _ = scripted(status(503, {"Retry-After": when}), status(429, {"Retry-After": far}),
                            httpx.Response(200, json=OK_BODY))
    result = run_chat(transport, clock)
    assert result.ok and clock.sleeps == [9.0, 60.0]


def test_parse_retry_after_rejects_garbage_and_clamps_past_dates():
    now = datetime(2026, 3, 1, tzinfo=UTC)
    assert parse_retry_after(None, now=now, cap=60) is None
    assert parse_retry_after("soon", now=now, cap=60) is None
    assert parse_retry_after("Sun, 01 Mar 2026 00:00:00 GMT", now=now + timedelta(minutes=1), cap=60) == 0.0


@pytest.mark.parametrize("code, error_class", [(401, ErrorClass.AUTH), (403, ErrorClass.FILTERED),
                                               (400, ErrorClass.BAD_REQUEST), (404, ErrorClass.NOT_FOUND),
                                               (422, ErrorClass.HTTP_ERROR)])
def test_non_retryable_statuses_fail_at_once(code, error_class):
    clock = FakeClock()
    transport, calls = scripted(status(code))
    result = run_chat(transport, clock)
    assert not result.ok and result.error_class == error_class and result.attempts == 1 and len(calls) == 1
    assert clock.sleeps == []


@pytest.mark.parametrize("error, error_class", [
    (httpx.ReadTimeout("slow"), ErrorClass.TIMEOUT),
    (httpx.ConnectTimeout("slow"), ErrorClass.TIMEOUT),
    (httpx.ConnectError("refused"), ErrorClass.CONNECTION_ERROR),
    (httpx.RemoteProtocolError("dropped"), ErrorClass.CONNECTION_ERROR),
])
def test_timeouts_and_connection_errors_are_retried(error, error_class):
    clock = FakeClock()
    transport, calls = scripted(error, error, httpx.Response(200, json=OK_BODY))
    result = run_chat(transport, clock)
    assert result.ok and result.attempts == 3 and clock.sleeps == [1.0, 2.0]
    transport, calls = scripted(error)
    result = run_chat(transport, FakeClock())
    assert not result.ok and result.error_class == error_class and result.http_status is None and len(calls) == 3


def test_a_200_that_is_not_a_chat_completion_is_a_parse_error_kept_raw_and_not_retried():
    clock = FakeClock()
    transport, calls = scripted(httpx.Response(200, text="<html>proxy</html>"))
    result = run_chat(transport, clock)
    assert not result.ok and result.error_class == ErrorClass.PARSE_ERROR
    assert result.raw_body == "<html>proxy</html>" and len(calls) == 1 and clock.sleeps == []


def test_an_error_embedded_in_a_200_body_is_treated_as_that_status():
    clock = FakeClock()
    transport, calls = scripted(httpx.Response(200, json={"error": {"code": 502, "message": "upstream"}}),
                                httpx.Response(200, json=OK_BODY))
    result = run_chat(transport, clock)
    assert result.ok and len(calls) == 2 and clock.sleeps == [1.0]


def test_usage_tokens_and_openrouter_cost_are_recorded():
    result = run_chat(scripted(httpx.Response(200, json=OK_BODY))[0], FakeClock())
    assert (result.prompt_tokens, result.completion_tokens, result.cost) == (120, 30, Decimal("0.000123"))
    assert result.model == "google/gemini-3-flash-preview"
    body = {**OK_BODY, "usage": {"prompt_tokens": 5}}
    result = run_chat(scripted(httpx.Response(200, json=body))[0], FakeClock())
    assert (result.prompt_tokens, result.completion_tokens, result.cost) == (5, None, None)


def test_no_more_requests_in_flight_than_the_limit():
    active = 0
    peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return httpx.Response(200, json=OK_BODY)

    async def go() -> list:
        async with LLMClient(base_url="http://x/v1", max_in_flight=7, transport=httpx.MockTransport(handler)) as c:
            return await asyncio.gather(*(c.chat({"i": i}) for i in range(60)))

    results = asyncio.run(go())
    assert all(r.ok for r in results)
    assert peak == 7


def test_requests_carry_the_payload_as_json():
    transport, calls = scripted(httpx.Response(200, json=OK_BODY))
    run_chat(transport, FakeClock())
    assert json.loads(calls[0].content) == {"model": "m", "messages": []}
