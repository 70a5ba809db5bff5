"""Async client for an OpenAI-compatible chat-completions endpoint, with the methodology's retry policy.

Policy (methodology §5.6, §15.3): at most ``max_in_flight`` requests in flight (a semaphore held only
while a request is on the wire, never during backoff); 3 attempts in total; after the n-th failed
attempt wait ``initial × 2^(n−1)`` seconds (1 s, then 2 s; 4 s would follow with a 4th attempt), capped
at 60 s, or exactly the server's Retry-After (seconds or an HTTP date) when it sends one, also capped at
60 s. Retried: 429, 5xx, 408, client timeouts and connection errors. Not retried: 401 (the caller stops
the run), 403 (filtered), 400, 404 and other 4xx, and a 200 whose body is not a chat completion.

Sleeping and "now" are injected so tests run the backoff schedule on a fake clock.

Why httpx transports rather than one AsyncClient: httpcore's connection pool does work proportional to
its open connections on every request, so one pool of 50 connections manages ~170 requests/s on this
2-core machine while 25 pools of 2 connections manage ~900/s; and sending through
``AsyncHTTPTransport.handle_async_request`` skips the client's per-request cookie, auth and redirect
machinery, which a POST to one fixed URL never needs (~1,650 → ~2,500 requests/s without latency).
The in-flight limit is a queue of ``max_in_flight`` slots spread over those small transports; taking a
slot is the semaphore. Timeouts travel in the request's ``timeout`` extension, as httpx's own client
sends them.
"""
from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, TypeVar

import httpx

from .config import ChatRequest, PipelineConfig, RetryPolicy
from .errors import RETRYABLE, ErrorClass, error_class_for_status

Sleep = Callable[[float], Awaitable[None]]
Now = Callable[[], datetime]


CONNECTIONS_PER_SHARD = 2

T = TypeVar("T")


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class CallResult:
    """What one logical call (all its attempts) produced."""

    ok: bool
    content: str = ""
    error_class: str = ""
    error_message: str = ""
    http_status: int | None = None
    attempts: int = 0
    raw_body: str = ""
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: Decimal | None = None
    waits: list[float] = field(default_factory=list)
    elapsed: float = 0.0


def parse_retry_after(value: str | None, *, now: datetime, cap: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), capped; None if absent/bad."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(cap, seconds))


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _content_of(body: Any) -> str:
    """The assistant message text of a chat completion; raises ValueError when there is none."""
    if not isinstance(body, dict):
        raise ValueError("response body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some providers send content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str):
        raise ValueError("response message has no text content")
    return content


class ClientOptions(TypedDict, total=False):
    """What an LLMClient takes besides the run's configuration: tests inject a fake clock or an httpx transport."""

    sleep: Sleep | None
    now: Now | None
    transport: httpx.AsyncBaseTransport | None
    extra_headers: dict[str, str] | None


class LLMClient:
    """One client per run (and per event loop): POST {base_url}/chat/completions with retries."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str = "",
        max_in_flight: int = 50,
        retry: RetryPolicy | None = None,
        timeout: float = 180.0,
        sleep: Sleep | None = None,
        now: Now | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.retry = retry or RetryPolicy()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._now: Now = now or _utcnow
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        headers = {"Content-Type": "application/json", **(extra_headers or {})}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._url = httpx.URL(self.url)
        self._headers = headers
        self._extensions = {"timeout": {"connect": min(timeout, 10.0), "read": timeout, "write": timeout,
                                        "pool": timeout}}
        if transport is not None:
            self._transports: list[httpx.AsyncBaseTransport] = [transport]
        else:
            shards = max(1, -(-max_in_flight // CONNECTIONS_PER_SHARD))
            ssl_context = httpx.create_ssl_context()  # load the CA certificates once, not once per shard
            limits = httpx.Limits(max_connections=CONNECTIONS_PER_SHARD,
                                  max_keepalive_connections=CONNECTIONS_PER_SHARD)
            self._transports = [httpx.AsyncHTTPTransport(limits=limits, verify=ssl_context) for _ in range(shards)]
        self._slots: asyncio.Queue[httpx.AsyncBaseTransport] = asyncio.Queue()
        for slot in range(max_in_flight):
            self._slots.put_nowait(self._transports[slot % len(self._transports)])
        self.max_in_flight = max_in_flight
        self.in_flight = 0
        self.max_seen_in_flight = 0

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for transport in self._transports:
            await transport.aclose()

    async def _attempt(self, body: bytes) -> tuple[httpx.Response | None, str, str]:
        """One request; returns (response, error_class, message) where a transport error has no response."""
        transport = await self._slots.get()
        self.in_flight += 1
        self.max_seen_in_flight = max(self.max_seen_in_flight, self.in_flight)
        try:
            request = httpx.Request("POST", self._url, headers=self._headers, content=body,
                                    extensions=self._extensions)
            response = await transport.handle_async_request(request)
            try:
                await response.aread()
            finally:
                await response.aclose()
            return response, "", ""
        except httpx.TimeoutException as exc:
            return None, ErrorClass.TIMEOUT, f"timeout: {type(exc).__name__}"
        except httpx.TransportError as exc:
            return None, ErrorClass.CONNECTION_ERROR, f"connection error: {type(exc).__name__}: {exc}"[:500]
        finally:
            self.in_flight -= 1
            self._slots.put_nowait(transport)

    async def chat(self, payload: ChatRequest) -> CallResult:
        """Send one chat-completions request with the retry policy; never raises for HTTP or network errors."""
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        started = time.perf_counter()
        result = CallResult(ok=False)
        while True:
            result.attempts += 1
            response, error_class, message = await self._attempt(body)
            retry_after: float | None = None
            if response is not None:
                result.http_status = response.status_code
                result.raw_body = response.text
                status = response.status_code
                if status == 200:
                    embedded = self._read_completion(result, response)
                    if embedded is None:
                        result.elapsed = time.perf_counter() - started
                        return result
                    status = embedded  # OpenRouter may report an upstream error inside a 200 body
                error_class = error_class_for_status(status)
                message = f"HTTP {status}: {response.text[:300]}"
                retry_after = parse_retry_after(
                    response.headers.get("retry-after"), now=self._now(), cap=self.retry.cap
                )
            result.error_class, result.error_message = error_class, message
            if error_class not in RETRYABLE or result.attempts >= self.retry.attempts:
                result.elapsed = time.perf_counter() - started
                return result
            wait = retry_after if retry_after is not None else self.retry.backoff(result.attempts)
            result.waits.append(wait)
            await self._sleep(wait)

    @staticmethod
    def _read_completion(result: CallResult, response: httpx.Response) -> int | None:
        """Fill result from a 200 body; returns an error status embedded in the body, else None."""
        try:
            data = response.json()
        except ValueError:
            data = None
        if isinstance(data, dict) and "choices" not in data and isinstance(data.get("error"), dict):
            code = data["error"].get("code")
            if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
                return code
        try:
            result.content = _content_of(data)
        except ValueError as exc:
            result.ok = False
            result.error_class = ErrorClass.PARSE_ERROR
            result.error_message = f"not a chat completion: {exc}"[:500]
            return None
        result.ok = True
        result.error_class = result.error_message = ""
        result.model = str(data.get("model") or "")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        result.prompt_tokens = _int(usage.get("prompt_tokens"))
        result.completion_tokens = _int(usage.get("completion_tokens"))
        result.cost = _decimal(usage.get("cost"))  # OpenRouter reports usage.cost in credits (USD)
        return None


async def chat_all(
    items: Sequence[T], *, config: PipelineConfig, base_url: str, payload: Callable[[T], ChatRequest],
    emit: Callable[[tuple[T, CallResult]], None], stop: threading.Event, client_options: ClientOptions | None = None,
) -> None:
    """Send one chat request per item through one LLMClient (the run's retry policy, timeouts and in-flight limit),
    `emit` each (item, result) as it arrives, and stop taking new items once `stop` is set (those in flight finish).
    Used by the study judge and the pairwise runs; the judge pipeline has its own loop (fallback, secondary)."""
    async with LLMClient(base_url=base_url, api_key=config.api_key, max_in_flight=config.max_in_flight,
                         retry=config.retry, timeout=config.timeout, **(client_options or {})) as client:
        pending = iter(items)

        async def worker() -> None:
            for item in pending:
                if stop.is_set():
                    return
                emit((item, await client.chat(payload(item))))

        await asyncio.gather(*(worker() for _ in range(min(config.max_in_flight, max(1, len(items))))))


def json_chat_payload(*, model: str, system: str, user: str, max_tokens: int) -> ChatRequest:
    """A chat request for a JSON-object answer at temperature 0 (the study judge's and pairwise runs' calls)."""
    return {"model": model, "temperature": 0, "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {"type": "json_object"}}


class ChatThread:
    """`chat_all` on an event loop in a background thread, which never touches the database: the calling thread
    reads (item, result) pairs from `out` until None, may `stop` it, and finds an exception of the loop in
    `crashed`. Leaving the `with` block stops it and waits for the calls in flight."""

    def __init__(self, items: Sequence[Any], *, config: PipelineConfig, base_url: str,
                 payload: Callable[[Any], ChatRequest], client_options: ClientOptions | None, name: str) -> None:
        self.out: queue.SimpleQueue = queue.SimpleQueue()
        self.stop = threading.Event()
        self.crashed: list[BaseException] = []

        def loop() -> None:
            try:
                asyncio.run(chat_all(items, config=config, base_url=base_url, payload=payload, emit=self.out.put,
                                     stop=self.stop, client_options=client_options))
            except BaseException as exc:  # handed to the database thread
                self.crashed.append(exc)
            finally:
                self.out.put(None)

        self._thread = threading.Thread(target=loop, name=name, daemon=True)

    def __enter__(self) -> ChatThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(timeout=30)

    @property
    def error(self) -> str:
        """The loop's exception as one line (empty if it did not crash)."""
        return f"{type(self.crashed[0]).__name__}: {self.crashed[0]}"[:2000] if self.crashed else ""
