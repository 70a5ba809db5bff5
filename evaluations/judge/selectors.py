"""Reads for the judge pipeline: run selections, pending items, run summaries and progress."""
from __future__ import annotations

import hashlib
import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypedDict

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Exists, FloatField, Max, OuterRef, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Cast
from django.http import Http404
from django.utils.timezone import localtime

from ..models import (
    Difficulty,
    EvaluatedModel,
    JudgeResult,
    JudgeRun,
    JudgeScore,
    ModelResponse,
    PairwiseRun,
    TestCase,
)
from ..selectors import difficulty_weight
from .config import money
from .guardrails import min_cases
from .leaderboard import (
    NO_TRADITION,
    Leaderboard,
    LeaderboardColumns,
    columns_are_trial,
    leaderboard_compute_columns,
)


class RunSelection(TypedDict, total=False):
    """A judge run's selection as stored in JudgeRun.selection (runs made before a key existed lack it)."""

    models: list[str]
    cases: dict[str, list[str]]
    run_label: str
    limit: int | None
    conditions: list[str]  # generation condition names
    max_response_id: int  # the highest response id when the run was created: the selection is frozen by it


class RunSummaryJson(TypedDict):
    """:class:`RunSummary` as JSON (the task's result and the API's run state): its fields, then the derived counts."""

    run_id: int
    status: str
    total: int
    scored: int
    failed: dict[str, int]
    filtered: int
    pending: int
    flagged: int
    fallback_used: int
    secondary_scored: int
    secondary_failed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: str
    flagged_auth_error: bool
    failed_total: int
    excluded: int
    done: int
    adds_up: bool


# --cases / admin filter: field name → ModelResponse lookup. Values are separated by "|".
CASE_FILTER_FIELDS: dict[str, str] = {
    "dimension": "test_case__dimension",
    "difficulty": "test_case__difficulty",
    "tradition": "test_case__tradition__key",
    "question_type": "test_case__question_type",
    "visibility": "test_case__visibility",
    "external_id": "test_case__external_id",
}


def case_filter_parse(text: str | None) -> dict[str, list[str]]:
    """Parse "dimension=textual|doctrinal,difficulty=hard" into {field: [values]}; raises ValueError."""
    result: dict[str, list[str]] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, values = part.partition("=")
        name = name.strip()
        if not sep or name not in CASE_FILTER_FIELDS:
            raise ValueError(
                f"bad case filter {part!r}: use field=value[|value…] with field one of {', '.join(CASE_FILTER_FIELDS)}"
            )
        wanted = [v.strip() for v in values.split("|") if v.strip()]
        if not wanted:
            raise ValueError(f"case filter {name!r} has no value")
        result.setdefault(name, []).extend(wanted)
    return result


def _case_q(filters: dict[str, list[str]], prefix: str = "test_case__") -> Q:
    q = Q()
    for name, values in filters.items():
        lookup = prefix + CASE_FILTER_FIELDS[name].removeprefix("test_case__")
        either = Q()
        for value in values:
            if name == "tradition" and value.lower() in ("none", "null", "-"):
                either |= Q(**{f"{prefix}tradition__isnull": True})
            elif name == "external_id" and value.endswith("*"):
                either |= Q(**{f"{lookup}__startswith": value[:-1]})
            else:
                either |= Q(**{lookup: value})
        q &= either
    return q


def cases_for_filter(*, filters: dict[str, list[str]]) -> QuerySet[TestCase]:
    """Active test cases matching a parsed case filter, ordered by external id."""
    return TestCase.objects.active().filter(_case_q(filters, prefix="")).select_related("tradition").order_by("external_id")


def responses_for_selection(*, selection: RunSelection) -> QuerySet[ModelResponse]:
    """Responses matching a run selection (active cases only), ordered by id, without the limit applied."""
    qs = ModelResponse.objects.filter(test_case__is_active=True)
    if selection.get("models"):
        qs = qs.filter(model__name__in=selection["models"])
    if selection.get("run_label"):
        qs = qs.filter(run_label=selection["run_label"])
    if selection.get("conditions"):  # generation conditions by name (runs made before conditions have none)
        qs = qs.filter(condition__name__in=selection["conditions"])
    if selection.get("cases"):
        qs = qs.filter(_case_q(selection["cases"]))
    if selection.get("max_response_id") is not None:
        qs = qs.filter(id__lte=selection["max_response_id"])
    return qs.order_by("id")


def judge_run_responses(*, run: JudgeRun) -> QuerySet[ModelResponse]:
    """Every response a run covers (its selection, frozen at creation by the highest response id)."""
    return responses_for_selection(selection=run.selection)


def judge_run_pending_responses(*, run: JudgeRun) -> QuerySet[ModelResponse]:
    """Responses of the run that have no result yet: what a (resumed) run still has to send."""
    done = JudgeResult.objects.filter(run=run, response=OuterRef("pk"))
    return judge_run_responses(run=run).filter(~Exists(done))


def judge_run_stale(*, run: JudgeRun, now: Any, stale_seconds: float) -> bool:
    """True when a running run's worker has not written for stale_seconds (it probably died)."""
    beat = run.heartbeat_at or run.started_at or run.created_at
    return (now - beat).total_seconds() > stale_seconds


@dataclass
class RunSummary:
    """Item-level outcome of a run: every item is scored, failed (by error class), filtered or pending."""

    run_id: int
    status: str
    total: int
    scored: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    filtered: int = 0
    pending: int = 0
    flagged: int = 0
    fallback_used: int = 0
    secondary_scored: int = 0
    secondary_failed: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal("0")
    flagged_auth_error: bool = False

    @property
    def failed_total(self) -> int:
        return sum(self.failed.values())

    @property
    def excluded(self) -> int:
        """Items excluded from scores: failed after all retries and fallbacks, or filtered (§5.6.4)."""
        return self.failed_total + self.filtered

    @property
    def done(self) -> int:
        return self.scored + self.excluded

    @property
    def adds_up(self) -> bool:
        return self.scored + self.failed_total + self.filtered + self.pending == self.total

    def as_dict(self) -> RunSummaryJson:
        return {
            "run_id": self.run_id, "status": self.status, "total": self.total, "scored": self.scored,
            "failed": dict(self.failed), "filtered": self.filtered, "pending": self.pending, "flagged": self.flagged,
            "fallback_used": self.fallback_used, "secondary_scored": self.secondary_scored,
            "secondary_failed": self.secondary_failed, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "cost": str(self.cost),
            "flagged_auth_error": self.flagged_auth_error, "failed_total": self.failed_total,
            "excluded": self.excluded, "done": self.done, "adds_up": self.adds_up,
        }

    def lines(self) -> list[str]:
        failed = ", ".join(f"{k} {v}" for k, v in sorted(self.failed.items())) or "none"
        return [
            f"run {self.run_id}: {self.status}",
            f"items      {self.total} = {self.scored} scored + {self.failed_total} failed + {self.filtered} filtered"
            f" + {self.pending} pending",
            f"failed by error class: {failed}",
            f"excluded from scores: {self.excluded} (failed + filtered)",
            f"consistency flags: {self.flagged}; fallback judge used: {self.fallback_used}; "
            f"secondary judge (self-preference): {self.secondary_scored} scored, {self.secondary_failed} failed",
            f"calls {self.calls}; tokens {self.prompt_tokens} prompt + {self.completion_tokens} completion; "
            f"cost {money(self.cost)}",
        ] + (["AUTHENTICATION FAILED (401): fix FAITHBENCH_LLM_API_KEY, then resume the run."]
             if self.flagged_auth_error else [])


def decisive_role(roles: set[str]) -> str:
    """Which of an item's results counts: secondary (self-preference), else fallback, else primary."""
    for role in (JudgeResult.Role.SECONDARY, JudgeResult.Role.FALLBACK, JudgeResult.Role.PRIMARY):
        if role in roles:
            return role
    return ""


@dataclass(frozen=True)
class DecisiveResult:
    """The result that counts for one response (see `decisive_role`), when it scored."""

    result_id: int
    response_id: int
    composite: Decimal | None


def judge_decisive_scored(*, run: JudgeRun, response_ids: Iterable[int] | None = None) -> dict[int, DecisiveResult]:
    """{response id: its decisive result} for the responses whose decisive result scored (one query)."""
    results = JudgeResult.objects.filter(run=run)
    wanted = None if response_ids is None else set(response_ids)
    by_response: dict[int, dict[str, tuple[int, str, Decimal | None]]] = {}
    rows = results.values_list("pk", "response_id", "role", "status", "composite")
    for pk, response_id, role, status, composite in rows.iterator(chunk_size=5000):
        if wanted is None or response_id in wanted:
            by_response.setdefault(response_id, {})[role] = (pk, status, composite)
    decisive = {}
    for response_id, roles in by_response.items():
        pk, status, composite = roles[decisive_role(set(roles))]
        if status == JudgeResult.Status.SCORED:
            decisive[response_id] = DecisiveResult(pk, response_id, composite)
    return decisive


def judge_decisive_raw_scores(
    *, run: JudgeRun, response_ids: Iterable[int] | None = None
) -> dict[int, dict[str, int]]:
    """{response id: {sub-dimension key: raw 0–3 score}} from each response's decisive scored result (two queries)."""
    decisive = judge_decisive_scored(run=run, response_ids=response_ids)
    response_of = {d.result_id: d.response_id for d in decisive.values()}
    scores: dict[int, dict[str, int]] = {response_id: {} for response_id in decisive}
    rows = JudgeScore.objects.filter(result__run=run, result__status=JudgeResult.Status.SCORED).values_list(
        "result_id", "sub_dimension", "raw_score")
    for result_id, key, raw in rows.iterator(chunk_size=20000):
        if result_id in response_of:
            scores[response_of[result_id]][key] = raw
    return scores


@dataclass(frozen=True)
class CallStats:
    """How a run's calls went: latency percentiles, time spent waiting to retry, and the mix of errors."""

    results: int
    latency_p50_ms: int | None
    latency_p95_ms: int | None
    retry_wait_s: float
    errors: dict[str, int]


def judge_run_call_stats(*, run: JudgeRun) -> CallStats:
    """Latency p50/p95 over the run's stored results (each result: one call, its attempts and waits included),
    total retry waiting, and the results' error classes with counts (two queries)."""
    latencies = sorted(ms for ms in JudgeResult.objects.filter(run=run, latency_ms__isnull=False)
                       .values_list("latency_ms", flat=True).iterator(chunk_size=5000) if ms is not None)
    errors = dict(JudgeResult.objects.filter(run=run).exclude(error_class="").values_list("error_class")
                  .annotate(n=Count("id")).order_by("-n", "error_class").values_list("error_class", "n"))
    waited = JudgeResult.objects.filter(run=run).aggregate(total=Sum("retry_wait_ms"))["total"] or 0

    def percentile(q: float) -> int | None:  # nearest rank
        return latencies[max(0, math.ceil(q * len(latencies)) - 1)] if latencies else None

    return CallStats(results=len(latencies), latency_p50_ms=percentile(0.5), latency_p95_ms=percentile(0.95),
                     retry_wait_s=waited / 1000, errors=errors)


def judge_run_summary(*, run: JudgeRun) -> RunSummary:
    """Counts per item from the stored results (not the run's running counters), so they can be audited."""
    run.refresh_from_db()
    by_item: dict[int, dict[str, tuple[str, str, bool]]] = {}
    rows = JudgeResult.objects.filter(run=run).values_list("response_id", "role", "status", "error_class", "consistency_flag")
    for response_id, role, status, error_class, flag in rows.iterator(chunk_size=5000):
        by_item.setdefault(response_id, {})[role] = (status, error_class, flag)
    summary = RunSummary(
        run_id=run.pk, status=run.status, total=run.total_items, calls=run.calls, prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens, cost=run.cost, flagged_auth_error=run.flagged_auth_error,
    )
    failed: Counter[str] = Counter()
    for results in by_item.values():
        status, error_class, flag = results[decisive_role(set(results))]
        if status == JudgeResult.Status.SCORED:
            summary.scored += 1
            summary.flagged += int(flag)
        elif status == JudgeResult.Status.FILTERED:
            summary.filtered += 1
        else:
            failed[error_class or status] += 1
        summary.fallback_used += int(JudgeResult.Role.FALLBACK in results)
        if JudgeResult.Role.SECONDARY in results:
            if results[JudgeResult.Role.SECONDARY][0] == JudgeResult.Status.SCORED:
                summary.secondary_scored += 1
            else:
                summary.secondary_failed += 1
    summary.failed = dict(failed)
    summary.pending = max(0, run.total_items - len(by_item))
    return summary


def judge_runs_recent(*, limit: int = 50) -> QuerySet[JudgeRun]:
    """The newest runs (the leaderboard's run picker)."""
    return JudgeRun.objects.select_related("rubric", "created_by").order_by("-created_at", "-id")[:limit]


@dataclass
class RunPage:
    """One page of runs, newest first; whether more follow is known from one extra row (no COUNT query)."""

    runs: list[JudgeRun]
    number: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def previous_page_number(self) -> int:
        return self.number - 1

    @property
    def next_page_number(self) -> int:
        return self.number + 1


RUNS_PAGE_SIZE = 50


def judge_runs_page(*, page: int = 1, per_page: int | None = None) -> RunPage:
    """The run list page: RUNS_PAGE_SIZE runs, newest first (one query)."""
    page, per_page = max(1, page), per_page or RUNS_PAGE_SIZE
    start = (page - 1) * per_page
    runs = list(JudgeRun.objects.select_related("rubric", "created_by")
                .order_by("-created_at", "-id")[start:start + per_page + 1])
    return RunPage(runs=runs[:per_page], number=page, has_next=len(runs) > per_page)


def judge_run_find(*, run_id: int) -> JudgeRun | None:
    """The judge run with this id (its rubric joined), or None."""
    return JudgeRun.objects.select_related("rubric").filter(pk=run_id).first()


def judge_run_series(*, run: JudgeRun) -> list[JudgeRun]:
    """The finished runs of `run`'s series (itself included when finished), oldest first."""
    first_id = run.repeat_of_id or run.pk
    return list(JudgeRun.objects.filter(Q(pk=first_id) | Q(repeat_of_id=first_id), status=JudgeRun.Status.FINISHED)
                .order_by("created_at", "id"))


def judge_run_latest_finished(*, rubric_id: int | None = None, skip_trials: bool = False) -> JudgeRun | None:
    """The newest run that *finished* (status finished, with scored items), optionally on one rubric version.

    The one meaning of "the latest run" wherever a default is taken — the leaderboard, the API, Delphi re-scoring,
    a calibration draw's judge edge cases, a report's judge: a newer cancelled, failed or still-running run is
    never the default (its scores are partial); it can still be chosen explicitly by id. With `skip_trials` (the
    leaderboard's defaults: page, API, conditions) nor is a *trial* run (no model with `min_cases()` scored cases,
    `judge_run_is_trial`): listed and can be chosen, never the default leaderboard. A report's or a draw's judge run
    keeps the plain rule: a run over just a cycle's few items is a legitimate judge for that cycle.
    """
    runs = JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED, scored_items__gt=0)
    if rubric_id is not None:
        runs = runs.filter(rubric_id=rubric_id)
    runs = runs.select_related("rubric").order_by("-created_at", "-id")
    if not skip_trials:
        return runs.first()
    for run in runs.iterator(chunk_size=20):
        if not judge_run_is_trial(run=run):
            return run
    return None


def judge_run_is_trial(*, run: JudgeRun) -> bool:
    """True when no model of the run has `min_cases()` scored cases (issue 32): listed, never default nor ranked."""
    if run.scored_items < min_cases():  # cannot hold min_cases scored cases for any model (no query)
        return True
    return columns_are_trial(leaderboard_columns(run=run), min_cases=min_cases())


def leaderboard_columns(*, run: JudgeRun, condition_id: int | None = None) -> LeaderboardColumns:
    """The run's finished items as columns for leaderboard_compute_columns (one query, however many items); only
    responses generated under one condition when `condition_id` is given.

    The aggregated query returns a row per item — its model, its case's facets, and each role's status and
    composite side by side — so the decisive result (see `decisive_role`) is picked without grouping result
    rows in Python.
    """
    composite_float = Cast("composite", FloatField())  # composites have 6 decimals: round() below restores them exactly
    per_role: dict[str, Max] = {}
    for role in (JudgeResult.Role.SECONDARY, JudgeResult.Role.FALLBACK, JudgeResult.Role.PRIMARY):
        per_role[f"{role}_status"] = Max("status", filter=Q(role=role))
        per_role[f"{role}_composite"] = Max(composite_float, filter=Q(role=role))
    rows = list(
        JudgeResult.objects.filter(run=run, **({} if condition_id is None else {"response__condition_id": condition_id}))
        .values("response_id").annotate(**per_role)
        .values_list("response__model__name", "response__model__family", "response__test_case_id",
                     "response__test_case__dimension", "response__test_case__difficulty",
                     "response__test_case__tradition__key", *per_role)
        .order_by("response_id")
    )
    weights = {difficulty: float(difficulty_weight(difficulty)) for difficulty in Difficulty.values}
    scored = JudgeResult.Status.SCORED
    items: list[tuple[Any, ...]] = []
    for (model, family, case_id, dimension, difficulty, tradition,
         s_status, s_composite, f_status, f_composite, p_status, p_composite) in rows:
        if s_status is not None:
            status, composite = s_status, s_composite
        elif f_status is not None:
            status, composite = f_status, f_composite
        else:
            status, composite = p_status, p_composite
        primary_status, primary_composite = (f_status, f_composite) if f_status is not None else (p_status, p_composite)
        items.append((model, family, case_id, dimension, weights[difficulty], tradition or NO_TRADITION,
                      status == scored,
                      _six_places(composite), _six_places(primary_composite if primary_status == scored else None),
                      s_status is not None))
    models, families, case_ids, dimensions, weights_, traditions, is_scored, composites, primaries, self_pref = (
        zip(*items, strict=True) if items else ((),) * 10)
    return LeaderboardColumns(
        model=np.array(models, dtype=object), family=np.array(families, dtype=object),
        case_id=np.array(case_ids, dtype=np.int64), dimension=np.array(dimensions, dtype=object),
        difficulty_weight=np.array(weights_, dtype=float), tradition=np.array(traditions, dtype=object),
        scored=np.array(is_scored, dtype=bool), composite=np.array(composites, dtype=float),
        primary_composite=np.array(primaries, dtype=float), self_preference=np.array(self_pref, dtype=bool),
    )


def _six_places(value: float | None) -> float:
    """A composite read as a float, rounded to its 6 stored decimals (= float(Decimal) of it); NaN for none."""
    return math.nan if value is None else round(value, 6)


def leaderboard_build(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> Leaderboard:
    """The leaderboard of one run (methodology §5.4.2, §5.7.1, §5.7.3), computed now."""
    return leaderboard_compute_columns(leaderboard_columns(run=run), n_resamples=n_resamples, seed=seed,
                                       min_cases=min_cases())


LEADERBOARD_CACHE_SECONDS = 24 * 3600


def _count_and_latest(queryset: QuerySet[Any], latest: str) -> tuple[Subquery, Subquery]:
    """Scalar subqueries: the queryset's row count and the greatest value of `latest`."""
    one_group = queryset.order_by().annotate(_all=Value(1)).values("_all")
    return (Subquery(one_group.annotate(n=Count("pk")).values("n")),
            Subquery(one_group.annotate(top=Max(latest)).values("top")))


def leaderboard_cache_key(*, run: JudgeRun, n_resamples: int, seed: int) -> str:
    """Changes whenever the leaderboard could: the run's results, the cases' facets, the models' names (2 queries).

    Results are only ever added (a resumed run) or deleted with their response, so their count and newest
    id tell; importing or editing a case sets its updated_at; models are few and read whole.
    """
    state = JudgeRun.objects.filter(pk=run.pk).values_list(
        *_count_and_latest(JudgeResult.objects.filter(run=run), "id"),
        *_count_and_latest(TestCase.objects.all(), "updated_at"),
    ).get()
    models = list(EvaluatedModel.objects.order_by("id").values_list("id", "name", "family"))
    digest = hashlib.sha256(repr((state, models)).encode()).hexdigest()[:24]
    # v3: rows carry cases/ranked, scores and comparisons `thin`, the board `trial` and `min_cases` (issue 32)
    return f"judge-leaderboard:v3:{run.pk}:{min_cases()}:{n_resamples}:{seed}:{digest}"


def leaderboard_cached(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> Leaderboard:
    """The leaderboard from the cache, which the worker fills when a run ends; computed (and cached) on a miss."""
    key = leaderboard_cache_key(run=run, n_resamples=n_resamples, seed=seed)
    board = cache.get(key)
    if board is None:
        board = leaderboard_build(run=run, n_resamples=n_resamples, seed=seed)
        cache.set(key, board, LEADERBOARD_CACHE_SECONDS)
    return board


def leaderboard_series_spread(*, run: JudgeRun, board: Leaderboard) -> tuple[list[JudgeRun], list[float | None] | None]:
    """§8.4: for a run in a series of two or more finished runs, the series and, per model of `board` (in its
    order), the standard deviation of the model's overall score across the series' leaderboards; else (runs, None)."""
    series = judge_run_series(run=run)
    if len(series) < 2:
        return series, None
    scores = [{row.model: row.overall.score for row in leaderboard_cached(run=member).models} for member in series]
    spread = []
    for row in board.models:
        values = [v for s in scores if (v := s.get(row.model)) is not None]
        spread.append(float(statistics.stdev(values)) if len(values) >= 2 else None)
    return series, spread


def leaderboard_refresh(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> Leaderboard:
    """Compute the run's leaderboard and cache it (the worker calls this when a run ends)."""
    board = leaderboard_build(run=run, n_resamples=n_resamples, seed=seed)
    cache.set(leaderboard_cache_key(run=run, n_resamples=n_resamples, seed=seed), board, LEADERBOARD_CACHE_SECONDS)
    return board


def judge_run_label(run: JudgeRun) -> str:
    """A run as a person picks it from a list: id, date, judge, the models it judged, rubric and scored items."""
    models = (run.selection or {}).get("models") or []
    judged = ", ".join(name.rsplit("/", 1)[-1] for name in models[:3]) + (" …" if len(models) > 3 else "") \
        if models else "every model"
    return (f"#{run.pk}{' ' + run.label if run.label else ''} · {localtime(run.created_at):%Y-%m-%d %H:%M} · judge "
            f"{run.primary_model} · {judged} · rubric v{run.rubric.version} · {run.scored_items} scored")


def judge_runs_finished_choices(*, rubric_id: int | None = None, limit: int = 200) -> list[tuple[int, str]]:
    """(id, label) of the newest finished runs that scored something (one query): what a report or a check reads."""
    runs = JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED, scored_items__gt=0).select_related("rubric")
    if rubric_id is not None:
        runs = runs.filter(rubric_id=rubric_id)
    return [(run.pk, judge_run_label(run)) for run in runs.order_by("-created_at", "-id")[:limit]]


def _judge_runs_with(related: tuple[str, ...]) -> QuerySet[JudgeRun]:
    # select_related() with no names would follow every foreign key: no names, no join.
    return JudgeRun.objects.select_related(*related) if related else JudgeRun.objects.all()


def judge_run_get(*, pk: int, related: tuple[str, ...] = ("rubric",)) -> JudgeRun | None:
    """The judge run with this id and its `related` rows (one query), or None."""
    return _judge_runs_with(related).filter(pk=pk).first()


def judge_run_or_404(*, pk: int, related: tuple[str, ...] = ("rubric",), finished: bool = False) -> JudgeRun:
    """The judge run with this id (only a finished one if `finished`) and its `related` rows; 404 when none."""
    runs = _judge_runs_with(related).filter(pk=pk)
    if finished:
        runs = runs.filter(status=JudgeRun.Status.FINISHED)
    found = runs.first()
    if found is None:
        raise Http404("No such judge run.")
    return found


def judge_runs_by_id(*, ids: Iterable[int]) -> dict[int, JudgeRun]:
    """The judge runs with these ids, by id (missing ids are absent)."""
    return {run.pk: run for run in JudgeRun.objects.filter(pk__in=list(ids))}


def judge_runs_finished(*, limit: int = 50) -> QuerySet[JudgeRun]:
    """The newest finished runs, by id (a page's run picker)."""
    return JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED).order_by("-pk")[:limit]


def judge_run_series_others(*, run: JudgeRun) -> list[int]:
    """The ids of the other runs of `run`'s series (any status), oldest first."""
    return list(JudgeRun.objects.filter(repeat_of_id=run.repeat_of_id or run.pk)
                .exclude(pk=run.pk).order_by("id").values_list("pk", flat=True))


def pairwise_run_get(*, pk: int) -> PairwiseRun | None:
    """The pairwise run with this id, or None."""
    return PairwiseRun.objects.filter(pk=pk).first()
