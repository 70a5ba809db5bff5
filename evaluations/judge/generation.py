"""Generating test-model answers under a generation condition, k repetitions each (methodology §8.3, §8.4, §9.1).

What is still to do is read from the database (`generation_pending`): every (case, model, repetition 1…k) without a
response under the condition and run label, so an interrupted generation resumes where it stopped. The requests go
through the judge pipeline's client (`ChatThread`: retries with Retry-After, timeouts, at most MAX_IN_FLIGHT in
flight); a budget stops new requests once the answers received have cost that much (those in flight finish), as
for judge runs. Answers come back as rows of the responses import format; the command imports them in batches, so
what was answered survives a crash.

The request for a condition (`condition_payload`): its system prompt (none when empty), temperature and token
limit, and the repetition number as the sampling `seed` (reproducible where the provider honours seeds; repetitions
still differ); reasoning on sends OpenRouter's unified `reasoning` parameter ({"effort": …} or {"enabled": true}); a route
sends OpenRouter provider routing ({"order": [route], "allow_fallbacks": false}), so the answer really comes from
that provider. A language condition sends the case's prompt as it is: translated cases are not modelled, so its
system prompt should ask for the language, or its responses are imported from elsewhere.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypedDict

from ..models import EvaluatedModel, GenerationCondition, ModelResponse, TestCase
from .client import CallResult, ChatThread
from .config import ChatMessage, ChatRequest, PipelineConfig, ProviderRouting, Reasoning
from .errors import ErrorClass


@dataclass(frozen=True)
class GenerationItem:
    """One answer to ask for."""

    case_id: int
    external_id: str
    prompt: str
    model: str
    provider: str
    family: str
    repetition: int


class GeneratedSettings(TypedDict, total=False):
    """A generated response's `settings`: who served it, what it cost, and the condition's reasoning and routing."""

    served_by: str
    cost: str | None
    reasoning: Reasoning
    provider: ProviderRouting


class GeneratedRow(TypedDict):
    """One generated answer as a record of the responses import format (and a line of the command's --output)."""

    case: str
    model: str
    provider: str
    family: str
    run_label: str
    condition: str
    repetition: int
    text: str
    temperature: float
    max_tokens: int
    system_prompt: str
    settings: GeneratedSettings
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass
class GenerationOutcome:
    """What a generation did: rows to import, failures by (model, error class), money spent, why it stopped."""

    rows: list[GeneratedRow] = field(default_factory=list)
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    cost: Decimal = Decimal(0)
    over_budget: bool = False
    auth_failed: bool = False


def condition_payload(*, condition: GenerationCondition, model: str, question: str, repetition: int = 1
                      ) -> ChatRequest:
    """The chat-completions body that asks `model` the question under `condition` (see the module docstring)."""
    messages: list[ChatMessage] = (
        [{"role": "system", "content": condition.system_prompt}] if condition.system_prompt else [])
    payload: ChatRequest = {
        "model": model, "messages": [*messages, {"role": "user", "content": question}],
        "temperature": float(condition.temperature), "max_tokens": condition.max_tokens,
        "seed": repetition,  # a sampling seed per repetition: reproducible where the provider honours it
    }
    if condition.reasoning:
        payload["reasoning"] = {"effort": condition.reasoning_effort} if condition.reasoning_effort else {"enabled": True}
    if condition.route:
        payload["provider"] = {"order": [condition.route], "allow_fallbacks": False}
    return payload


def generation_pending(
    *, condition: GenerationCondition, cases: Sequence[TestCase], models: Sequence[tuple[str, str, str]],
    run_label: str, repetitions: int,
) -> list[GenerationItem]:
    """Every (case, model, repetition 1…k) that has no response yet under this condition and run label."""
    if repetitions < 1:
        raise ValueError("repetitions must be at least 1")
    known = {m.name: m for m in EvaluatedModel.objects.filter(name__in=[name for name, _, _ in models])}
    done = set(
        ModelResponse.objects.filter(condition=condition, run_label=run_label,
                                     test_case__in=[c.pk for c in cases], model__name__in=list(known))
        .values_list("test_case_id", "model__name", "repetition")
    )
    return [
        GenerationItem(case.pk, case.external_id, case.prompt, name,
                       provider or getattr(known.get(name), "provider", ""),
                       family or getattr(known.get(name), "family", ""), repetition)
        for repetition in range(1, repetitions + 1) for case in cases for name, provider, family in models
        if (case.pk, name, repetition) not in done
    ]


def _row(item: GenerationItem, payload: ChatRequest, result: CallResult, condition: GenerationCondition,
         run_label: str) -> GeneratedRow:
    system = payload["messages"][0]["content"] if payload["messages"][0]["role"] == "system" else ""
    settings: GeneratedSettings = {"served_by": result.model,
                                   "cost": str(result.cost) if result.cost is not None else None}
    if "reasoning" in payload:
        settings["reasoning"] = payload["reasoning"]
    if "provider" in payload:
        settings["provider"] = payload["provider"]
    return {
        "case": item.external_id, "model": item.model, "provider": item.provider, "family": item.family,
        "run_label": run_label, "condition": condition.name, "repetition": item.repetition,
        "text": result.content, "temperature": payload["temperature"], "max_tokens": payload["max_tokens"],
        "system_prompt": system,
        "settings": settings,
        "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
    }


def generation_run(
    *, items: Sequence[GenerationItem], condition: GenerationCondition, run_label: str, config: PipelineConfig,
    budget: Decimal | None = None, batch_size: int = 50,
) -> Iterator[GenerationOutcome]:
    """Ask for every item; yields an outcome every `batch_size` answers (and a last one) with the rows since the
    previous yield, so the caller can import them as they come. Failures and cost accumulate across yields."""
    outcome = GenerationOutcome()

    def payload(item: GenerationItem) -> ChatRequest:
        return condition_payload(condition=condition, model=item.model, question=item.prompt,
                                 repetition=item.repetition)

    with ChatThread(list(items), config=config, base_url=config.base_url, payload=payload, client_options=None,
                    name="generation") as thread:
        while (got := thread.out.get()) is not None:
            item, result = got
            outcome.cost += result.cost or Decimal(0)
            if result.error_class == ErrorClass.AUTH:
                outcome.auth_failed = True
                thread.stop.set()
            elif not result.ok:
                key = (item.model, str(result.error_class))
                outcome.failures[key] = outcome.failures.get(key, 0) + 1
            else:
                outcome.rows.append(_row(item, payload(item), result, condition, run_label))
            if budget is not None and outcome.cost >= budget and not outcome.over_budget:
                outcome.over_budget = True
                thread.stop.set()
            if len(outcome.rows) >= batch_size:
                yield outcome
                outcome.rows = []
        if thread.crashed:
            raise thread.crashed[0]
    yield outcome
