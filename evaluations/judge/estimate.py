"""What a judge run will cost before it starts (issue 15 part 8): calls, tokens and — with a known price — cost,
from the very prompts the pipeline will send."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypedDict

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Avg, Sum

from ..models import JudgeResult, JudgeRun, RubricVersion
from .config import setting
from .pairwise import pairwise_run_create, pending_pair_calls
from .pipeline import work_items
from .services import MAX_REPEATS, judge_run_create, judge_runs_create


class EstimateJson(TypedDict):
    """:class:`Estimate` as JSON (the API's dry run, the run's cached estimate): the cost as a decimal string."""

    items: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: str | None
    basis: str


@dataclass(frozen=True)
class Estimate:
    """What a run is expected to use before it starts: calls, tokens and, when a price is known, cost."""

    items: int
    calls: int  # one primary call per item, plus the secondary judge's for the primary judge's own family
    prompt_tokens: int  # the prompts' characters / 4
    completion_tokens: int
    cost: Decimal | None
    basis: str  # where the completion length and the price come from

    def as_dict(self) -> EstimateJson:
        return {"items": self.items, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost": None if self.cost is None else str(self.cost),
                "basis": self.basis}


def judge_price(model: str) -> tuple[Decimal, Decimal, str] | None:
    """(input, output) price per token of a judge model and where it comes from: FAITHBENCH_JUDGE_PRICES, else
    the cost its earlier results reported per token (one price for both), else None."""
    for name, per_million_in, per_million_out in setting_prices():
        if name == model:
            return (Decimal(str(per_million_in)) / 1_000_000, Decimal(str(per_million_out)) / 1_000_000,
                    "the configured price (FAITHBENCH_JUDGE_PRICES)")
    seen = JudgeResult.objects.filter(judge_model=model, cost__isnull=False).aggregate(
        cost=Sum("cost"), tokens=Sum("prompt_tokens") + Sum("completion_tokens"))
    if seen["cost"] and seen["tokens"]:
        per_token = Decimal(seen["cost"]) / Decimal(seen["tokens"])
        return per_token, per_token, "the cost per token its earlier results reported"
    return None


def setting_prices() -> list[list[Any]]:
    return list(setting("JUDGE_PRICES") or [])


def judge_run_estimate(*, run: JudgeRun) -> Estimate:
    """Tokens and cost of a queued run's remaining items, from the prompts the pipeline will send (characters / 4)
    and the judges' typical answer length (their earlier results' mean, else FAITHBENCH_ESTIMATE_COMPLETION_TOKENS).
    Fallback calls happen only after failures and are not counted."""
    items = work_items(run=run)  # the same prompts the run will send
    prompt_chars = sum(len(i.system_prompt) + len(i.user_message) for i in items)
    secondary = [i for i in items if i.needs_secondary]
    calls = len(items) + len(secondary)
    prompt_tokens = (prompt_chars + sum(len(i.system_prompt) + len(i.user_message) for i in secondary)) // 4
    completion = {}
    for model in {run.primary_model, run.secondary_model} - {""}:
        mean = JudgeResult.objects.filter(judge_model=model, completion_tokens__isnull=False).aggregate(
            mean=Avg("completion_tokens"))["mean"]
        completion[model] = int(mean) if mean else int(setting("ESTIMATE_COMPLETION_TOKENS"))
    primary_out = completion[run.primary_model] * len(items)
    secondary_out = completion.get(run.secondary_model, 0) * len(secondary)
    cost: Decimal | None = Decimal(0)
    sources = []
    for model, n_in, n_out in ((run.primary_model, prompt_chars // 4, primary_out),
                               (run.secondary_model, (prompt_tokens - prompt_chars // 4), secondary_out)):
        if not n_in and not n_out:
            continue
        price = judge_price(model)
        if price is None:
            cost = None
            sources.append(f"{model}: no price (configure FAITHBENCH_JUDGE_PRICES)")
        else:
            if cost is not None:
                cost += price[0] * n_in + price[1] * n_out
            sources.append(f"{model}: {price[2]}")
    return Estimate(items=len(items), calls=calls, prompt_tokens=prompt_tokens,
                    completion_tokens=primary_out + secondary_out,
                    cost=None if cost is None else cost.quantize(Decimal("0.000001")), basis="; ".join(sources))


ESTIMATE_CACHE_SECONDS = 600


def judge_run_estimate_cached(*, run: JudgeRun) -> Estimate:
    """`judge_run_estimate` kept in the cache for a queued run: its page and the API poll it every few seconds, and
    building every prompt of a large run on each poll would cost more than the poll itself."""
    key = f"judge-run-estimate:v1:{run.pk}:{run.total_items}:{run.processed_items}"
    estimate = cache.get(key)
    if estimate is None:
        estimate = judge_run_estimate(run=run)
        cache.set(key, estimate, ESTIMATE_CACHE_SECONDS)
    return estimate


@dataclass(frozen=True)
class Plan:
    """What starting runs would do: per judge model, one run's estimate; the totals over every run."""

    repeats: int
    per_judge: list[tuple[str, Estimate]]

    @property
    def runs(self) -> int:
        return self.repeats * len(self.per_judge)

    @property
    def items(self) -> int:
        return self.per_judge[0][1].items if self.per_judge else 0

    @property
    def calls(self) -> int:
        return self.repeats * sum(e.calls for _, e in self.per_judge)

    @property
    def cost(self) -> Decimal | None:
        costs = [e.cost for _, e in self.per_judge if e.cost is not None]
        return None if len(costs) < len(self.per_judge) else self.repeats * sum(costs, Decimal(0))


def judge_run_plan(*, rubric: RubricVersion, **selection: Any) -> Estimate:
    """The estimate of the run `judge_run_create` would create, from a run created and rolled back (nothing is
    kept); raises its ValidationError for a selection it refuses."""
    with transaction.atomic():  # the run exists only long enough to build its prompts
        estimate = judge_run_estimate(run=judge_run_create(rubric=rubric, **selection))
        transaction.set_rollback(True)
    return estimate


def judge_runs_plan(*, rubric: RubricVersion, judges: list[str], repeats: int, **selection: Any) -> Plan:
    """The estimate of the runs `judge_runs_create` would create, from runs created and rolled back (nothing is
    kept); raises its ValidationError for a selection it refuses."""
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValidationError(f"repeats must be between 1 and {MAX_REPEATS}", code="bad_repeats")
    with transaction.atomic():
        runs = judge_runs_create(rubric=rubric, judges=judges, repeats=1, **selection)
        plan = Plan(repeats=repeats, per_judge=[(run.primary_model, judge_run_estimate(run=run)) for run in runs])
        transaction.set_rollback(True)
    return plan


PAIRWISE_COMPLETION_TOKENS = 120  # a verdict and one or two sentences


def pairwise_run_plan(*, model: str, cases: str | None = None, limit: int | None = None,
                      base_url: str = "") -> Estimate:
    """Calls, tokens and cost of a pairwise run before it starts, from a run created and rolled back."""
    with transaction.atomic():
        run = pairwise_run_create(model=model, cases=cases, limit=limit, base_url=base_url)
        calls = pending_pair_calls(run=run)
        transaction.set_rollback(True)
    prompt_tokens = sum(len(c.system) + len(c.user) for c in calls) // 4
    completion_tokens = PAIRWISE_COMPLETION_TOKENS * len(calls)
    price = judge_price(model)
    cost = None if price is None else (price[0] * prompt_tokens + price[1] * completion_tokens).quantize(
        Decimal("0.000001"))
    basis = f"{model}: {price[2]}" if price else f"{model}: no price (configure FAITHBENCH_JUDGE_PRICES)"
    return Estimate(items=len(calls) // 2, calls=len(calls), prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens, cost=cost, basis=basis)
