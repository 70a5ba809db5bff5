"""Reads for condition leaderboards and deltas (issue 26; methodology §8.3, §8.4, §9.1, §17 items 8, 10, 11).

A judge run judges every response its selection matches, whatever its generation condition; here its results are
split by condition: one leaderboard per condition (a model's case score is the mean over its repetitions, see
`leaderboard.repetitions_collapse`), and paired deltas, per model, between every two conditions of the run that
differ in exactly one setting (reasoning on/off or effort, provider route, language, temperature, token limit,
system prompt). The baseline of a pair is the condition whose setting is the standard condition's (reasoning off,
the default route, English…); else the one named first. Computed once per state of the run's results and cached
like the judge leaderboard.
"""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from itertools import combinations

from django.core.cache import cache
from django.db.models import Count
from django.utils.html import escape

from ..models import GenerationCondition, JudgeResult, JudgeRun
from ..spreadsheet import csv_writer
from .guardrails import min_cases
from .leaderboard import (
    ConditionDelta,
    Leaderboard,
    LeaderboardColumns,
    condition_delta,
    leaderboard_compute_columns,
    repetitions_collapse,
)
from .selectors import (
    LEADERBOARD_CACHE_SECONDS,
    judge_run_is_trial,
    judge_run_latest_finished,
    leaderboard_cache_key,
    leaderboard_columns,
)


@dataclass
class ConditionBoard:
    """One condition's leaderboard within a run."""

    condition: GenerationCondition
    board: Leaderboard
    repetitions: int  # the most repetitions any model has of one case under it
    responses: int


@dataclass
class ConditionReport:
    run_id: int
    boards: list[ConditionBoard] = field(default_factory=list)
    deltas: list[ConditionDelta] = field(default_factory=list)
    n_resamples: int = 1000
    seed: int = 0

    @property
    def has_deltas(self) -> bool:
        return any(d.n_cases for d in self.deltas)


def judge_runs_finished_recent(*, limit: int = 20) -> list[JudgeRun]:
    """The newest finished runs (the condition page's run picker)."""
    return list(JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED).order_by("-created_at", "-id")[:limit])


def judge_run_latest_with_conditions() -> JudgeRun | None:
    """The newest finished run that judged responses of more than one condition (else the newest finished run);
    never a trial run (issue 32: too few cases per model), which can still be chosen by id."""
    runs = JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED).order_by("-created_at", "-id")
    several = runs.annotate(n_conditions=Count("results__response__condition", distinct=True)).filter(n_conditions__gt=1)
    for found in several.iterator(chunk_size=20):
        if not judge_run_is_trial(run=found):
            return found
    return judge_run_latest_finished(skip_trials=True)


def condition_pair_orient(a: GenerationCondition, b: GenerationCondition, standard: GenerationCondition
                          ) -> tuple[GenerationCondition, GenerationCondition, str] | None:
    """(condition, baseline, axis) for two conditions differing in exactly one setting; None otherwise."""
    axes = a.differs_in(b)
    if len(axes) != 1:
        return None
    axis = axes[0]
    field_name = "reasoning" if axis == "reasoning" else axis
    standard_value = getattr(standard, field_name)
    if b.is_standard or (getattr(b, field_name) == standard_value and getattr(a, field_name) != standard_value):
        return a, b, axis
    if a.is_standard or getattr(a, field_name) == standard_value:
        return b, a, axis
    return (b, a, axis) if a.name < b.name else (a, b, axis)


def condition_report_build(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> ConditionReport:
    """Per-condition leaderboards and paired deltas of one run, computed now (one query per condition, plus 2)."""
    ids = set(JudgeResult.objects.filter(run=run).values_list("response__condition_id", flat=True).distinct())
    conditions = list(GenerationCondition.objects.filter(pk__in=ids))  # standard first, then by name
    report = ConditionReport(run_id=run.pk, n_resamples=n_resamples, seed=seed)
    collapsed: dict[int, LeaderboardColumns] = {}
    for condition in conditions:
        columns = leaderboard_columns(run=run, condition_id=condition.pk)
        per_case = repetitions_collapse(columns)
        collapsed[condition.pk] = per_case
        keys = list(zip(columns.model.tolist(), columns.case_id.tolist(), strict=True))
        repetitions = max((keys.count(k) for k in set(keys)), default=0)
        report.boards.append(ConditionBoard(
            condition, leaderboard_compute_columns(per_case, n_resamples=n_resamples, seed=seed, min_cases=min_cases()),
            repetitions,
            int(columns.model.size)))
    standard = next((c for c in conditions if c.is_standard), None) or GenerationCondition.objects.standard()
    for a, b in combinations(conditions, 2):
        oriented = condition_pair_orient(a, b, standard)
        if oriented is None:
            continue
        condition, baseline, axis = oriented
        models = sorted(set(collapsed[condition.pk].model.tolist()) & set(collapsed[baseline.pk].model.tolist()))
        for model in models:
            report.deltas.append(condition_delta(
                collapsed[condition.pk], collapsed[baseline.pk], model=model, names=(condition.name, baseline.name),
                axis=axis, n_resamples=n_resamples, seed=seed, min_cases=min_cases()))
    report.deltas.sort(key=lambda d: (d.axis, d.model, d.condition, d.baseline))
    return report


def condition_report_cached(*, run: JudgeRun, n_resamples: int = 1000, seed: int = 0) -> ConditionReport:
    """`condition_report_build` from the cache, keyed like the judge leaderboard (its results, cases, models) and
    the conditions' settings."""
    state = list(GenerationCondition.objects.order_by("pk").values_list(
        "pk", "name", "is_standard", "route", "reasoning", "reasoning_effort", "temperature", "max_tokens",
        "system_prompt", "language"))
    digest = hashlib.sha256(repr(state).encode()).hexdigest()[:16]
    key = f"condition-report:v2:{leaderboard_cache_key(run=run, n_resamples=n_resamples, seed=seed)}:{digest}"
    report = cache.get(key)
    if report is None:
        report = condition_report_build(run=run, n_resamples=n_resamples, seed=seed)
        cache.set(key, report, LEADERBOARD_CACHE_SECONDS)
    return report


LEADERBOARD_FIELDS = ["run", "condition", "model", "score", "ci_low", "ci_high", "cases", "scored", "excluded",
                      "repetitions", "tie_group"]
DELTA_FIELDS = ["run", "model", "axis", "condition", "baseline", "delta", "ci_low", "ci_high", "cases", "p_value",
                "cohens_d", "distinguishable_from_zero"]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def condition_report_csv(report: ConditionReport) -> str:
    """The per-condition leaderboards, then a blank line, then the deltas, as CSV (`evaluations.spreadsheet.csv_writer`)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(LEADERBOARD_FIELDS)
    for entry in report.boards:
        for row in entry.board.models:
            writer.writerow([report.run_id, entry.condition.name, row.model, _number(row.overall.score),
                             _number(row.overall.ci_low), _number(row.overall.ci_high), row.items,
                             row.scored, row.excluded, entry.repetitions, row.tie_group])
    writer.writerow([])
    writer.writerow(DELTA_FIELDS)
    for d in report.deltas:
        writer.writerow([report.run_id, d.model, d.axis, d.condition, d.baseline, _number(d.delta),
                         _number(d.ci_low), _number(d.ci_high), d.n_cases, _number(d.p_value),
                         _number(d.cohens_d), "yes" if d.distinguishable else "no"])
    return out.getvalue()


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def condition_delta_svg(deltas: list[ConditionDelta], *, title: str) -> str:
    """A forest plot of the paired deltas with their intervals, against a solid line at 0 (the style of the IRR
    report's forest plots: a labelled row per delta, a dot and its interval, the figures at the right)."""
    rows = [d for d in deltas if d.delta is not None]
    row_h, left, width, top = 22, 300, 320, 34
    ends = [v for d in rows for v in (d.ci_low, d.ci_high, d.delta) if v is not None]
    span = max([0.1, *(abs(v) for v in ends)])
    x_min, x_max = -span * 1.1, span * 1.1

    def x(value: float) -> float:
        return left + (value - x_min) / (x_max - x_min) * width

    height = top + row_h * max(1, len(rows)) + 36
    colour = {True: "#27507a", False: "#5b6573"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {left + width + 250} {height}" '
        f'width="100%" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{x(0):.1f}" y1="{top - 8}" x2="{x(0):.1f}" y2="{height - 30}" stroke="#333"/>',
        f'<text x="{x(0) + 3:.1f}" y="{top - 10}" font-size="11">0</text>',
        f'<line x1="{left}" y1="{height - 30}" x2="{left + width}" y2="{height - 30}" stroke="#555"/>',
    ]
    for tick in (x_min, x_min / 2, 0.0, x_max / 2, x_max):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{height - 30}" x2="{x(tick):.1f}" y2="{height - 26}" stroke="#555"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="10" text-anchor="middle">{tick:+.2f}</text>')
    if not rows:
        parts.append(f'<text x="{left}" y="{top + 14}" font-size="11">No pair of conditions shares a model.</text>')
    for i, d in enumerate(rows):
        y = top + i * row_h + row_h / 2
        fill = colour[d.distinguishable]
        label = f"{d.model} · {d.condition} − {d.baseline}"
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(label)}</text>')
        if d.ci_low is not None and d.ci_high is not None:
            parts.append(f'<line x1="{x(d.ci_low):.1f}" y1="{y:.1f}" x2="{x(d.ci_high):.1f}" y2="{y:.1f}" '
                         f'stroke="{fill}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(d.delta):.1f}" cy="{y:.1f}" r="4" fill="{fill}"/>')  # type: ignore[arg-type]
        verdict = "differs from 0" if d.distinguishable else "not distinguishable from 0"
        parts.append(f'<text x="{left + width + 8}" y="{y + 4:.1f}" font-size="10">{_fmt(d.delta)} '
                     f'[{_fmt(d.ci_low, 2)}, {_fmt(d.ci_high, 2)}] n={d.n_cases} {verdict}</text>')
    parts.append("</svg>")
    return "".join(parts)
