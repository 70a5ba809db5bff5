"""Judge-pipeline configuration (methodology §15) read from settings.FAITHBENCH, then the environment.

Every key can be set in settings.FAITHBENCH; a key missing there is read from the environment variable
FAITHBENCH_<KEY>, then falls back to the methodology's value below. Secrets (the API key) are never
given a default.
"""
from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Literal, NotRequired, TypedDict

from django.conf import settings


class Defaults(TypedDict):
    """The FAITHBENCH settings and their methodology values (see :data:`DEFAULTS`)."""

    LLM_BASE_URL: str
    LLM_API_KEY: str
    JUDGE_PRIMARY_MODEL: str
    JUDGE_FALLBACK_MODEL: str
    JUDGE_SECONDARY_MODEL: str
    JUDGE_TEMPERATURE: float
    JUDGE_MAX_TOKENS: int
    TEST_MODEL_TEMPERATURE: float
    TEST_MODEL_MAX_TOKENS: int
    MAX_IN_FLIGHT: int
    RETRY_ATTEMPTS: int
    RETRY_INITIAL_BACKOFF: float
    RETRY_MULTIPLIER: float
    RETRY_MAX_BACKOFF: float
    REQUEST_TIMEOUT: float
    WRITE_BATCH_SIZE: int
    WRITE_FLUSH_SECONDS: float
    STALE_RUN_SECONDS: int
    CURRENCY: str
    JUDGE_PRICES: list[list[str | float]]
    ESTIMATE_COMPLETION_TOKENS: int
    MODEL_FAMILIES: list[list[str]]


# Methodology §15.1–15.3 and the brief of the judge-pipeline issue.
DEFAULTS: Defaults = {
    "LLM_BASE_URL": "https://openrouter.ai/api/v1",
    "LLM_API_KEY": "",
    "JUDGE_PRIMARY_MODEL": "google/gemini-3-flash-preview",
    "JUDGE_FALLBACK_MODEL": "openai/gpt-4o-mini",
    # The cross-validation judge for self-preference (§5.3.2). Empty means "same as the fallback judge".
    "JUDGE_SECONDARY_MODEL": "",
    "JUDGE_TEMPERATURE": 0,
    "JUDGE_MAX_TOKENS": 16000,
    "TEST_MODEL_TEMPERATURE": 0.7,
    "TEST_MODEL_MAX_TOKENS": 2000,
    "MAX_IN_FLIGHT": 50,
    "RETRY_ATTEMPTS": 3,
    "RETRY_INITIAL_BACKOFF": 1.0,
    "RETRY_MULTIPLIER": 2.0,
    "RETRY_MAX_BACKOFF": 60.0,
    "REQUEST_TIMEOUT": 180.0,
    "WRITE_BATCH_SIZE": 200,
    "WRITE_FLUSH_SECONDS": 0.5,
    # The lease of a running run: its worker writes a heartbeat every second; after this long without one the run
    # is taken back and resumed by any worker (`evaluations.tasks.judge_runs_recover`).
    "STALE_RUN_SECONDS": 30,
    # The currency the endpoint reports costs in (OpenRouter: credits, i.e. US dollars); shown with every amount.
    "CURRENCY": "USD",
    # Prices for estimates before a run, per million tokens: [["model", input, output], …]. Without one, an estimate
    # uses the model's price observed in earlier runs (their reported cost per token), else it gives no cost.
    "JUDGE_PRICES": [],
    # Completion tokens per judge call assumed by an estimate when the model has no earlier results.
    "ESTIMATE_COMPLETION_TOKENS": 700,
    # fnmatch pattern → family; first match wins (see judge_family).
    "MODEL_FAMILIES": [
        ["google/gemini-*", "gemini"],
        ["openai/gpt-*", "gpt"],
        ["anthropic/claude-*", "claude"],
        ["meta-llama/*", "llama"],
    ],
}

# Methodology §5.2.1: "System prompts: Minimal"; §15.2: "Minimal (question-only)".
TEST_MODEL_SYSTEM_PROMPT = "Answer the question."


def setting(key: str) -> Any:
    """One FAITHBENCH setting: settings.FAITHBENCH, else env FAITHBENCH_<KEY>, else the default."""
    configured = getattr(settings, "FAITHBENCH", {}) or {}
    if key in configured and configured[key] not in (None, ""):
        return configured[key]
    from_env = os.environ.get(f"FAITHBENCH_{key}")
    if from_env not in (None, ""):
        default = DEFAULTS.get(key)
        if isinstance(default, list):
            return json.loads(from_env)
        if isinstance(default, bool):
            return from_env.strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(default, int):
            return int(from_env)
        if isinstance(default, float):
            return float(from_env)
        return from_env
    return DEFAULTS.get(key)


def money(amount: Any, places: int = 6) -> str:
    """An amount with its currency ("0.001234 USD"); "—" for none."""
    if amount is None or amount == "":
        return "—"
    return f"{Decimal(str(amount)):.{places}f} {setting('CURRENCY')}"


def judge_family(model_name: str) -> str:
    """The model family of a model name (google/gemini-* → gemini …); "" when no pattern matches."""
    name = (model_name or "").strip().lower()
    for pattern, family in setting("MODEL_FAMILIES"):
        if fnmatch.fnmatchcase(name, pattern.lower()):
            return str(family)
    return ""


class ChatMessage(TypedDict):
    role: Literal["system", "user"]
    content: str


class ResponseFormat(TypedDict):
    type: Literal["json_object"]


class Reasoning(TypedDict, total=False):
    """OpenRouter's unified reasoning parameter: {"effort": …} or {"enabled": true}."""

    effort: str
    enabled: bool


class ProviderRouting(TypedDict):
    """OpenRouter provider routing: only these providers, in this order."""

    order: list[str]
    allow_fallbacks: bool


class ChatRequest(TypedDict):
    """The body of a chat-completions request (OpenAI-compatible, with OpenRouter's `reasoning` and `provider`)."""

    model: str
    messages: list[ChatMessage]
    temperature: float
    max_tokens: int
    response_format: NotRequired[ResponseFormat]
    seed: NotRequired[int]
    reasoning: NotRequired[Reasoning]
    provider: NotRequired[ProviderRouting]


@dataclass(frozen=True)
class RetryPolicy:
    """Methodology §5.6.1/§15.3: 3 attempts, backoff 1 s → 2 s → 4 s (×2), capped at 60 s."""

    attempts: int = 3
    initial: float = 1.0
    multiplier: float = 2.0
    cap: float = 60.0

    def backoff(self, failed_attempts: int) -> float:
        """Seconds to wait after the n-th failed attempt: initial × multiplier^(n−1), capped."""
        return min(self.cap, self.initial * self.multiplier ** max(0, failed_attempts - 1))

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            attempts=int(setting("RETRY_ATTEMPTS")),
            initial=float(setting("RETRY_INITIAL_BACKOFF")),
            multiplier=float(setting("RETRY_MULTIPLIER")),
            cap=float(setting("RETRY_MAX_BACKOFF")),
        )


@dataclass(frozen=True)
class PipelineConfig:
    """Everything a judge run needs besides the rubric and the items; built once per run."""

    base_url: str
    api_key: str = field(repr=False, default="")
    primary_model: str = DEFAULTS["JUDGE_PRIMARY_MODEL"]
    fallback_model: str = DEFAULTS["JUDGE_FALLBACK_MODEL"]
    secondary_model: str = DEFAULTS["JUDGE_FALLBACK_MODEL"]
    judge_temperature: float = 0
    judge_max_tokens: int = 16000
    max_in_flight: int = 50
    timeout: float = 180.0
    retry: RetryPolicy = RetryPolicy()
    write_batch_size: int = 200
    write_flush_seconds: float = 0.5

    @classmethod
    def from_settings(cls, **overrides: Any) -> PipelineConfig:
        """The configuration in force, with optional overrides (tests, benchmark, a run's recorded models)."""
        fallback = str(setting("JUDGE_FALLBACK_MODEL"))
        config = cls(
            base_url=str(setting("LLM_BASE_URL")),
            api_key=str(setting("LLM_API_KEY") or ""),
            primary_model=str(setting("JUDGE_PRIMARY_MODEL")),
            fallback_model=fallback,
            secondary_model=str(setting("JUDGE_SECONDARY_MODEL") or fallback),
            judge_temperature=float(setting("JUDGE_TEMPERATURE")),
            judge_max_tokens=int(setting("JUDGE_MAX_TOKENS")),
            max_in_flight=int(setting("MAX_IN_FLIGHT")),
            timeout=float(setting("REQUEST_TIMEOUT")),
            retry=RetryPolicy.from_settings(),
            write_batch_size=int(setting("WRITE_BATCH_SIZE")),
            write_flush_seconds=float(setting("WRITE_FLUSH_SECONDS")),
        )
        return replace(config, **{k: v for k, v in overrides.items() if v is not None})


class RunOverrides(TypedDict, total=False):
    """PipelineConfig's tunables a caller may set for one run (tests, the throughput benchmark)."""

    api_key: str
    judge_temperature: float
    judge_max_tokens: int
    max_in_flight: int
    timeout: float
    retry: RetryPolicy
    write_batch_size: int
    write_flush_seconds: float


def judge_payload(*, model: str, system_prompt: str, user_message: str, config: PipelineConfig) -> ChatRequest:
    """Chat-completions body for a judge call (§15.1: temperature 0, 16,000 tokens, JSON object output)."""
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": user_message},
        ],
        "temperature": config.judge_temperature,
        "max_tokens": config.judge_max_tokens,
        "response_format": {"type": "json_object"},
    }


def test_model_payload(*, model: str, question: str) -> ChatRequest:
    """Chat-completions body for a test model (§15.2: temperature 0.7, 2,000 tokens, minimal system prompt)."""
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": TEST_MODEL_SYSTEM_PROMPT},
            {"role": "user", "content": question},
        ],
        "temperature": float(setting("TEST_MODEL_TEMPERATURE")),
        "max_tokens": int(setting("TEST_MODEL_MAX_TOKENS")),
    }


test_model_payload.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
