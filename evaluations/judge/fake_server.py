"""A local OpenAI-compatible chat-completions server for tests, the benchmark and offline demos.

Standard library only (asyncio, HTTP/1.1 with keep-alive), so it also runs on its own:

    python -m evaluations.judge.fake_server --port 8765 --latency 0.1 --fault 429=0.1 --fault timeout=0.02

then point FAITHBENCH_LLM_BASE_URL at http://127.0.0.1:8765/v1. From Python it is a context manager
that serves from a background thread on a free loopback port:

    with FakeLLMServer(latency=0.05, fault_rates={"429": 0.1}) as server:
        ... server.base_url ...   # "http://127.0.0.1:<port>/v1"

Requests: POST /v1/chat/completions or /chat/completions. A request with
``response_format: {"type": "json_object"}`` is a judge request: the server reads the sub-dimension
keys from the system prompt's "- key (NN%): ..." lines and the evaluated text from the user message's
MODEL RESPONSE block, and answers with scores derived deterministically from a hash of that text (and
of the judge model's name, so two judges disagree now and then). A judge request about an imported study
(its system prompt names a "reliability study" and a scale "from A to B") gets ``{"score": N}``, N on
that scale by the same kind of hash (``fake_study_score``). Any
other request is a test-model request and gets a deterministic plausible answer to the question.

Faults, by rate (a deterministic draw from seed, text hash, model and call number, so a run's faults do
not depend on request order) or by rule (``FaultRule``), each one of FAULTS:
429 (with Retry-After), 500, 503, 408, 401, 403, 400, 404 (JSON error bodies); ``timeout`` (hold the
connection for ``hang_seconds`` and close it without answering); ``malformed`` (prose with broken JSON),
``partial`` (JSON cut in half), ``missing`` (one sub-dimension dropped), ``float_score`` (a 2.5),
``contradiction`` (3s whose reasoning says "incorrect"), ``bad_envelope`` (a 200 whose body is not JSON).

Conditions (issue 26): a test-model answer carries a marker for each condition setting it was asked with —
``REASONING_MARKER`` when the request turned reasoning on, ``route_marker(name)`` when it routed to a provider — and a
request's ``seed`` (the generation sends the repetition number) changes the answer, so repetitions differ.
``condition_effects`` ({marker: effect}) moves the fake judge's scores of texts containing a marker: the expected
composite of such a text is 0.5 + effect instead of 0.5 (effect in [−0.5, 0.5]; effects of several markers add up,
clipped to that range). Each sub-dimension score is drawn as usual (uniform 0–3, mean 1.5) and, with probability
2 × |effect|, replaced by 3 (effect > 0) or 0 (effect < 0): its mean becomes 1.5 + 3 × effect, so the composite's
mean (Σ raw/3 × weight) moves by exactly `effect`. Tests and the demo know the true delta between conditions.

Every call is recorded (``log``) and counted per text hash (``calls_for(text)``), so tests can assert
that an item is never sent again after it succeeded; ``usage_reported()`` totals the tokens that
its answers reported, so tests can check a run's accounting against what the endpoint would bill.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import TypedDict

FAULTS: tuple[str, ...] = (
    "429", "500", "503", "408", "401", "403", "400", "404", "timeout", "malformed", "partial", "missing",
    "float_score", "contradiction", "bad_envelope",
)
HTTP_FAULTS = {"429": "Too Many Requests", "500": "Internal Server Error", "503": "Service Unavailable",
               "408": "Request Timeout", "401": "Unauthorized", "403": "Forbidden", "400": "Bad Request",
               "404": "Not Found"}
REASONS = {200: "OK", **{int(k): v for k, v in HTTP_FAULTS.items()}}

_SUB_LINE = re.compile(r"^- ([A-Za-z][A-Za-z0-9_]*) \(\d+(?:\.\d+)?%\): ", re.MULTILINE)
_RESPONSE_END = re.compile(
    r"\n\n(?:REFERENCE ANSWER \(for comparison\):\n|TRADITION CONTEXT: |"
    r"Evaluate the model response and provide scores for each dimension\.$)"
)
_WORDS = ("grace covenant logos hesed atonement council Nicaea patristic exegesis typology justification "
          "theosis sacrament canon Septuagint hermeneutic tradition scripture Chalcedon incarnation").split()


def text_key(text: str) -> str:
    """The hash under which calls about one text (a response, or a question) are counted."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class FaultRule:
    """Inject `fault` into matching calls: text containing `contains`, model `model`, call numbers `calls`."""

    fault: str
    contains: str | None = None
    model: str | None = None
    calls: tuple[int, ...] | None = None  # 1-based call numbers for the text; None = every call
    times: int | None = None  # fire at most this many times in total; None = unlimited
    fired: int = 0

    def matches(self, *, text: str, model: str, call_no: int) -> bool:
        if self.times is not None and self.fired >= self.times:
            return False
        if self.contains is not None and self.contains not in text:
            return False
        if self.model is not None and self.model != model:
            return False
        return self.calls is None or call_no in self.calls


@dataclass(frozen=True)
class CallRecord:
    key: str
    model: str
    kind: str  # "judge" or "test"
    call_no: int  # 1-based, per text hash, over all models
    outcome: str  # "ok" or a fault name
    at: float

    @property
    def answered_200(self) -> bool:
        """The server delivered an HTTP 200 (a success as far as retrying is concerned)."""
        return self.outcome not in HTTP_FAULTS and self.outcome != "timeout"


@dataclass
class FakeLLMServer:
    """An OpenAI-compatible fake; see the module docstring."""

    host: str = "127.0.0.1"
    port: int = 0
    latency: float = 0.0
    seed: int = 0
    fault_rates: dict[str, float] = field(default_factory=dict)
    rules: list[FaultRule] = field(default_factory=list)
    hang_seconds: float = 5.0
    retry_after: str | None = "1"
    api_key: str | None = None  # when set, requests without "Bearer <api_key>" get 401
    position_bias: float = 0.0  # pairwise requests: the share of them answered "A" whatever the answers say
    condition_effects: dict[str, float] = field(default_factory=dict)  # marker → composite shift (module docstring)
    log: list[CallRecord] = field(default_factory=list)
    calls: Counter = field(default_factory=Counter)
    usage: Counter = field(default_factory=Counter)  # prompt_tokens, completion_tokens, answers reported

    def __post_init__(self) -> None:
        unknown = set(self.fault_rates) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault(s): {', '.join(sorted(unknown))}; expected some of {', '.join(FAULTS)}")
        if sum(self.fault_rates.values()) > 1:
            raise ValueError("fault rates add up to more than 1")
        if any(abs(effect) > 0.5 for effect in self.condition_effects.values()):
            raise ValueError("a condition effect is a composite shift in [-0.5, 0.5]")
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._hanging: set[asyncio.StreamWriter] = set()

    # ----------------------------------------------------------------- lifecycle
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> FakeLLMServer:
        """Serve from a daemon thread; returns once the port is bound."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(self._bind())
            except BaseException as exc:  # report bind errors to the starting thread
                errors.append(exc)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    async def _bind(self) -> asyncio.AbstractServer:
        server = await asyncio.start_server(self._handle, self.host, self.port, backlog=2048)
        self.port = server.sockets[0].getsockname()[1]
        return server

    def stop(self) -> None:
        """Stop serving and close every connection, including held ("timeout") ones."""
        loop = self._loop
        if loop is None or self._thread is None:
            return

        def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._hanging):
                writer.close()
            loop.stop()

        loop.call_soon_threadsafe(shutdown)
        self._thread.join(10)
        self._loop = self._thread = None

    # ----------------------------------------------------------------- inspection
    def calls_for(self, text: str) -> int:
        """How many requests concerned this response text (judge) or question (test model)."""
        with self._lock:
            return self.calls[text_key(text)]

    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self.log)

    def usage_reported(self) -> dict[str, int]:
        """Totals over every answer that carried a usage block: prompt_tokens, completion_tokens, answers."""
        with self._lock:
            return {key: self.usage[key] for key in ("prompt_tokens", "completion_tokens", "answers")}

    def reset(self) -> None:
        with self._lock:
            self.log.clear()
            self.calls.clear()
            self.usage.clear()

    # ----------------------------------------------------------------- HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, path, version = lines[0].split(" ", 2)
                except ValueError:
                    return
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                reply = await self._dispatch(method, path.split("?", 1)[0], headers, body)
                if reply is None:  # a "timeout" fault: hold the connection, then drop it unanswered
                    self._hanging.add(writer)
                    try:
                        await asyncio.sleep(self.hang_seconds)
                    finally:
                        self._hanging.discard(writer)
                    return
                status, extra, payload = reply
                keep_alive = version.upper() == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
                       f"Content-Length: {len(payload)}",
                       "Content-Type: application/json",
                       f"Connection: {'keep-alive' if keep_alive else 'close'}"]
                out += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + payload)
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.CancelledError, OSError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes] | None:
        arrived = time.monotonic()
        if method == "GET" and path in ("/health", "/v1/health"):
            return 200, {}, b'{"ok": true}'
        if method != "POST" or path not in ("/v1/chat/completions", "/chat/completions"):
            return 404, {}, _error_body(404, f"no route {method} {path}")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {}, _error_body(401, "invalid API key")
        try:
            request = json.loads(body)
            messages = request["messages"]
            model = str(request.get("model") or "")
        except (ValueError, KeyError, TypeError):
            return 400, {}, _error_body(400, "body is not a chat-completions request")
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        is_judge = (request.get("response_format") or {}).get("type") == "json_object"
        text = _response_text(user) if is_judge else user
        key = text_key(text)
        with self._lock:
            self.calls[key] += 1
            call_no = self.calls[key]
            fault = self._choose_fault(text=text, key=key, model=model, call_no=call_no)
            self.log.append(CallRecord(key, model, "judge" if is_judge else "test", call_no, fault or "ok",
                                       time.monotonic()))
        if self.latency:  # answer `latency` seconds after the request arrived, whatever the parsing cost
            await asyncio.sleep(max(0.0, self.latency - (time.monotonic() - arrived)))
        if fault == "timeout":
            return None
        if fault in HTTP_FAULTS:
            code = int(fault)
            extra = {}
            if code == 429 and self.retry_after is not None:
                extra["Retry-After"] = self.retry_after
            return code, extra, _error_body(code, HTTP_FAULTS[fault])
        if fault == "bad_envelope":
            return 200, {}, b"<html>upstream proxy error</html>"
        if is_judge and _PAIRWISE in system:
            content = ("I cannot decide between them." if fault in ("malformed", "partial", "missing") else
                       _pairwise_content(user=user, key=key, model=model, position_bias=self.position_bias))
        elif is_judge and _STUDY_SCALE.search(system):
            content = _study_content(system=system, key=key, model=model, fault=fault)
        elif is_judge:
            content = _judge_content(system=system, key=key, model=model, fault=fault,
                                     effect=condition_effect(text, self.condition_effects))
        else:
            content = _test_answer(question=user, model=model, markers=request_markers(request),
                                   seed=request.get("seed"))
        completion_tokens = max(1, len(content) // 4)
        prompt_tokens = max(1, (len(system) + len(user)) // 4)
        with self._lock:
            self.usage.update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, answers=1)
        reply = {
            "id": f"fake-{key}-{call_no}",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "cost": round((prompt_tokens * 0.1 + completion_tokens * 0.4) / 1e6, 8)},
        }
        return 200, {}, json.dumps(reply).encode("utf-8")

    def _choose_fault(self, *, text: str, key: str, model: str, call_no: int) -> str | None:
        for rule in self.rules:
            if rule.matches(text=text, model=model, call_no=call_no):
                rule.fired += 1
                return rule.fault
        if not self.fault_rates:
            return None
        u = _unit(self.seed, key, model, call_no)
        cumulative = 0.0
        for fault, rate in self.fault_rates.items():
            cumulative += rate
            if u < cumulative:
                return fault
        return None


def _error_body(code: int, message: str) -> bytes:
    return json.dumps({"error": {"message": message, "code": code}}).encode("utf-8")


def _response_text(user: str) -> str:
    """The MODEL RESPONSE block of a judge user message (methodology §5.3.4)."""
    start = user.find("MODEL RESPONSE:\n")
    if start == -1:
        return user
    rest = user[start + len("MODEL RESPONSE:\n"):]
    match = _RESPONSE_END.search(rest)
    return rest[: match.start()] if match else rest


def fake_score(key: str, sub_dimension: str, judge_model: str = "") -> int:
    """The deterministic 0–3 score the fake judge `judge_model` gives a text (by hash) on one sub-dimension."""
    return int(_unit("score", key, sub_dimension, judge_model) * 4)


_STUDY_SCALE = re.compile(r"reliability study.*?from (-?\d+(?:\.\d+)?) to (-?\d+(?:\.\d+)?)", re.S)


_PAIRWISE = "Compare the two answers"
_ANSWER_BLOCKS = re.compile(r"ANSWER A:\n(.*)\n\nANSWER B:\n(.*)\Z", re.S)


def fake_quality(text: str, judge_model: str = "") -> float:
    """How good the fake judge finds a text when comparing (a hash: the same for either position)."""
    return _unit("quality", text_key(text), judge_model)


def _pairwise_content(*, user: str, key: str, model: str, position_bias: float) -> str:
    """A pairwise verdict: the answer of higher `fake_quality` — or "A" for a share `position_bias` of requests."""
    match = _ANSWER_BLOCKS.search(user)
    if match is None:
        return json.dumps({"preferred": "tie", "reasoning": "I could not find two answers."})
    first, second = match.group(1), match.group(2)
    if position_bias and _unit("position", key, model) < position_bias:
        return json.dumps({"preferred": "A", "reasoning": "The first answer is better."})
    a, b = fake_quality(first, model), fake_quality(second, model)
    preferred = "tie" if abs(a - b) < 0.02 else ("A" if a > b else "B")
    return json.dumps({"preferred": preferred, "reasoning": f"Deterministic fake comparison ({a:.2f} vs {b:.2f})."})


def fake_study_score(key: str, low: float, high: float, judge_model: str = "") -> int:
    """The deterministic whole-number score the fake judge gives an imported study's item on a low–high scale."""
    return int(low) + int(_unit("study", key, judge_model) * (int(high) - int(low) + 1))


def _study_content(*, system: str, key: str, model: str, fault: str | None) -> str:
    """A study judge's reply (calibration.studies.judging): {"score": N} on the scale its system prompt names."""
    match = _STUDY_SCALE.search(system)
    assert match is not None
    low, high = float(match.group(1)), float(match.group(2))
    if fault in ("malformed", "partial", "missing"):
        return "I would rather not say."
    score = high + 1 if fault == "float_score" else fake_study_score(key, low, high, model)
    return json.dumps({"score": score})


REASONING_MARKER = "[reasoning]"


def route_marker(route: str) -> str:
    """The marker a fake answer carries when the request was routed to provider `route`."""
    return f"[route:{route}]"


def request_markers(request: Mapping[str, object]) -> list[str]:
    """The condition markers of a test-model request (a parsed request body, unchecked): reasoning on, provider route."""
    markers = []
    reasoning = request.get("reasoning")
    if isinstance(reasoning, dict) and (reasoning.get("effort") or reasoning.get("enabled")):
        markers.append(REASONING_MARKER)
    provider = request.get("provider")
    if isinstance(provider, dict) and provider.get("order"):
        markers.append(route_marker(str(provider["order"][0])))
    return markers


def condition_effect(text: str, effects: dict[str, float]) -> float:
    """The composite shift of a text: the sum of the effects of the markers it contains, clipped to [−0.5, 0.5]."""
    total = sum(effect for marker, effect in effects.items() if marker in text)
    return max(-0.5, min(0.5, total))


def fake_score_with_effect(key: str, sub_dimension: str, judge_model: str = "", effect: float = 0.0) -> int:
    """`fake_score`, replaced by 3 (effect > 0) or 0 (effect < 0) with probability 2 × |effect|: mean 1.5 + 3 × effect."""
    if effect and _unit("effect", key, sub_dimension, judge_model) < 2 * abs(effect):
        return 3 if effect > 0 else 0
    return fake_score(key, sub_dimension, judge_model)


class FakeScore(TypedDict):
    dimension: str
    rawScore: int | float  # the judge's JSON key; a float only for the "float_score" fault
    reasoning: str


def _judge_content(*, system: str, key: str, model: str, fault: str | None, effect: float = 0.0) -> str:
    names = _SUB_LINE.findall(system)
    scores: list[FakeScore] = []
    for name in names:
        score = fake_score_with_effect(key, name, model, effect)
        reasoning = f"Deterministic fake assessment of {name}: level {score} of 3."
        if fault == "contradiction":
            score, reasoning = 3, f"The treatment of {name} is incorrect and misleading."
        scores.append({"dimension": name, "rawScore": score, "reasoning": reasoning})
    if fault == "missing" and scores:
        scores.pop()
    if fault == "float_score" and scores:
        scores[0]["rawScore"] = 2.5
    text = json.dumps({"scores": scores}, indent=2)
    if fault == "malformed":
        return "Here is my evaluation: {scores: [" + text[20:60].replace('"', "'") + " ... (truncated"
    if fault == "partial":
        return text[: len(text) // 2]
    if _unit("fence", key) < 0.2:  # some real judges wrap their JSON; the parser must cope
        return f"```json\n{text}\n```"
    return text


def _test_answer(*, question: str, model: str, markers: Sequence[str] = (), seed: object = None) -> str:
    # Without a seed or markers the answer is the historical one; seeds (repetitions) and conditions change it.
    variant = "" if seed is None and not markers else f"\x1f{seed}\x1f{' '.join(markers)}"
    key = text_key(f"{model}\x1f{question}{variant}")
    words = [_WORDS[int(_unit(key, i) * len(_WORDS))] for i in range(40 + int(_unit(key, "n") * 80))]
    tail = (" " + " ".join(markers)) if markers else ""
    return (f"In answer to the question, {model or 'the model'} would say: "
            + " ".join(words) + f". This is a deterministic offline answer from the fake server.{tail}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat-completions server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="how long a 'timeout' fault holds")
    parser.add_argument("--retry-after", default="1", help="Retry-After value sent with 429s ('' for none)")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND=RATE",
                        help=f"inject a fault at a rate, e.g. 429=0.1; kinds: {', '.join(FAULTS)}")
    args = parser.parse_args(argv)
    rates = {}
    for item in args.fault:
        kind, _, rate = item.partition("=")
        rates[kind] = float(rate)
    server = FakeLLMServer(host=args.host, port=args.port, latency=args.latency, seed=args.seed,
                           fault_rates=rates, hang_seconds=args.hang_seconds, retry_after=args.retry_after or None)

    async def serve() -> None:
        bound = await server._bind()
        print(f"fake LLM server on {server.base_url} (latency {args.latency}s, faults {rates or 'none'}); "
              f"started {formatdate(usegmt=True)}", flush=True)
        async with bound:
            await bound.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
