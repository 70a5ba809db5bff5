"""The calibrated snapshot's reads (the selector steps; `build` and `budget` compute, `snapshots` stores): the
leaderboard's rows — every response a judge run judged, with its expert truth where the cycle labelled it —, the
variance budget's rows, the stored versions, and the stored variance budget a page shows."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from annotations.models import CalibrationCycle
from evaluations.judge.config import judge_family
from evaluations.judge.selectors import judge_decisive_scored, judge_run_series
from evaluations.models import (
    Difficulty,
    GenerationCondition,
    JudgeResult,
    JudgeRun,
    ModelResponse,
)
from evaluations.selectors import difficulty_weight
from evidence.models import Snapshot

from ..cycles.fair_truth import SeverityTruth, severity_adjusted_truth
from ..cycles.truth import (
    composite_of,
    median_seconds_per_item,
    response_truths,
    sub_weights,
    submitted_sub_scores,
)
from .budget import BudgetFigures, BudgetPage, BudgetRow
from .build import InputRow
from .schema import CalibratedReport, Pair

NO_TRADITION = "none"


@dataclass(frozen=True)
class CalibratedInputs:
    rows: list[InputRow]
    seconds_per_item: float | None
    judge_families: tuple[str, ...]
    severity_notes: tuple[str, ...] = ()  # panels whose rater model could not be fitted (fair_truth's notes)


@dataclass(frozen=True)
class LabelArrivals:
    """Per labelled response: its place in the order the experts submitted (1 = first) and the variance of its
    panel's mean composite (panel noise; absent with fewer than 2 experts)."""

    arrival: dict[int, int]
    panel_var: dict[int, float]


def label_arrivals(*, cycle: CalibrationCycle) -> LabelArrivals:
    """From the submitted annotations' stored submission times (two queries): a response's label arrives with its
    first submitted score, so recomputing a version later never reorders the labels (the clock is the experts')."""
    weights = sub_weights(rubric_id=cycle.rubric_id)
    first: dict[int, tuple] = {}
    scores: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    dimension_of: dict[int, str] = {}
    for response, dimension, expert, submitted, key, score in submitted_sub_scores().filter(
        annotation__assignment__cycle=cycle).values_list(
        "annotation__assignment__item__response_id", "annotation__assignment__item__response__test_case__dimension",
        "annotation__assignment__expert_id", "annotation__submitted_at", "key", "score",
    ).order_by("annotation_id", "key").iterator(chunk_size=5000):
        stamp = (submitted is None, submitted.isoformat() if submitted else "")
        if response not in first or stamp < first[response]:
            first[response] = stamp
        scores[(response, expert)][key] = float(score)
        dimension_of[response] = dimension
    arrival = {response: place for place, response in
               enumerate(sorted(first, key=lambda r: (first[r], r)), start=1)}
    composites: dict[int, list[float]] = defaultdict(list)
    for (response, _expert), subs in sorted(scores.items()):
        value = composite_of(subs, weights.get(dimension_of[response], {}))
        if value is not None:
            composites[response].append(value)
    panel_var = {}
    for response, values in composites.items():
        if len(values) >= 2:
            mean = sum(values) / len(values)
            panel_var[response] = round(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values), 6)
    return LabelArrivals(arrival=arrival, panel_var=panel_var)


def calibrated_inputs(*, run: JudgeRun, cycle: CalibrationCycle) -> CalibratedInputs:
    """Every response the run judged (scored or not), with the cycle's expert truth and inclusion probability."""
    decisive = judge_decisive_scored(run=run)
    judged = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    truths = response_truths(cycle=cycle)
    gold = response_truths(cycle=cycle, basis="gold")
    arrivals = label_arrivals(cycle=cycle)
    severity = severity_adjusted_truth(cycle=cycle)
    rows = []
    for response_id, model, family, dimension, tradition, difficulty, case, language in (
        ModelResponse.objects.filter(pk__in=judged).order_by("pk").values_list(
            "pk", "model__name", "model__family", "test_case__dimension", "test_case__tradition__key",
            "test_case__difficulty", "test_case_id", "test_case__language").iterator(chunk_size=5000)
    ):
        result = decisive.get(response_id)
        truth = truths.get(response_id)
        rows.append(InputRow(
            response_id=response_id, model=model, family=family or "", dimension=dimension,
            tradition=tradition or NO_TRADITION, difficulty=difficulty,
            judge=None if result is None or result.composite is None else round(float(result.composite), 6),
            expert=None if truth is None else round(truth.composite, 6),
            expert_gold=None if response_id not in gold else round(gold[response_id].composite, 6),
            inclusion_probability=None if truth is None else (
                1.0 if truth.inclusion_basis == "edge_case" and truth.inclusion_probability is None
                else truth.inclusion_probability),
            inclusion_basis="" if truth is None else (truth.inclusion_basis or "unknown"),
            n_raters=0 if truth is None else truth.n_raters,
            arrival=None if truth is None else arrivals.arrival.get(response_id),
            case=case,
            panel_var=None if truth is None else arrivals.panel_var.get(response_id),
            expert_fair=_fair(severity, response_id) if truth is not None else None,
            language=language or "en",
        ))
    # self-preference is the primary judge's (methodology §8.2); the fallback answers only on its errors
    families = tuple(f for f in (judge_family(run.primary_model),) if f)
    return CalibratedInputs(rows=rows, seconds_per_item=median_seconds_per_item(cycle=cycle), judge_families=families,
                            severity_notes=tuple(severity.notes))


def _fair(severity: SeverityTruth, response_id: int) -> float | None:
    """A labelled response's severity-adjusted truth composite, rounded as the panel-mean one is."""
    value = severity.adjusted.get(response_id)
    return None if value is None else round(value, 6)


def calibrated_runs() -> QuerySet[JudgeRun]:
    """Judge runs with their rubric (a page's run, found by id)."""
    return JudgeRun.objects.select_related("rubric")


def calibrated_runs_finished(*, limit: int = 50) -> QuerySet[JudgeRun]:
    """The newest finished judge runs (the page's run picker)."""
    return JudgeRun.objects.filter(status=JudgeRun.Status.FINISHED).order_by("-pk")[:limit]


def calibrated_label_cycles(*, run: JudgeRun) -> QuerySet[CalibrationCycle]:
    """The cycles whose expert scores may correct a run: standard cycles on the run's rubric, newest first."""
    return CalibrationCycle.objects.filter(rubric_id=run.rubric_id, kind=CalibrationCycle.Kind.STANDARD).order_by(
        "-created_at", "-pk")


def calibrated_snapshots(*, run: JudgeRun) -> QuerySet[Snapshot]:
    return Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).select_related(
        "label_cycle", "requested_by").defer("payload", "rater_key").order_by("-version")


def calibrated_snapshot_for(*, run: JudgeRun, version: int | None = None) -> Snapshot | None:
    """The asked-for version of a run's calibrated leaderboard, else its newest ready one."""
    snapshots = Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).select_related("label_cycle")
    if version is not None:
        return snapshots.filter(version=version).first()
    return snapshots.ready().order_by("-version").first()


@dataclass(frozen=True)
class EvidenceSummary:
    """The newest calibrated leaderboard that used a cycle's expert scores, as the cycle page's evidence meter."""

    snapshot: Snapshot
    models: list[EvidenceRow]
    pairs: list[Pair]  # adjacent pairs not yet separated, with the labels each would need


@dataclass(frozen=True)
class EvidenceRow:
    """A model's calibrated score with its interval and n, and the expert labels (and hours) still needed."""

    model: str
    estimate: float | None
    lower: float | None
    upper: float | None
    n: int
    more: int | None
    hours: float | None
    verdict: str = ""  # schema 2: the model's live verdict (the judge against the experts) and what would settle it
    advice: str = ""


def calibrated_evidence_for_cycle(*, cycle: CalibrationCycle) -> EvidenceSummary | None:
    found = _newest_not_trial(Snapshot.objects.of(Snapshot.Kind.CALIBRATED).ready().filter(label_cycle=cycle)
                              .select_related("judge_run").order_by("-finished_at", "-pk")[:20])
    if found is None:
        return None
    snapshot, report = found
    models = [EvidenceRow(model=e.model, estimate=e.calibrated.estimate, lower=e.calibrated.lower,
                          upper=e.calibrated.upper, n=e.calibrated.n, more=e.evidence.more_labels,
                          hours=e.evidence.expert_hours,
                          verdict="" if e.evidence.verdict is None else e.evidence.verdict.verdict,
                          advice="" if e.evidence.advice is None else e.evidence.advice.words) for e in report.models]
    pairs = [p for p in report.pairs if p.adjacent and (
        not p.separated if p.verdict is None else p.verdict.verdict not in ("separated", "equivalent"))]
    return EvidenceSummary(snapshot=snapshot, models=models, pairs=pairs)


def _newest_not_trial(snapshots: Iterable[Snapshot]) -> tuple[Snapshot, CalibratedReport] | None:
    """The first snapshot (newest first) of a run that is not a trial (issue 32: a trial run's board is listed on its
    own page, never the default evidence of a cycle), with its tree."""
    for snapshot in snapshots:
        if snapshot.payload:
            report = CalibratedReport.from_json(snapshot.payload)  # the stored JSON read back into the tree
            if not report.meta.trial:
                return snapshot, report
    return None


SUMMARY_BUDGET_KEY = "variance_budget"  # where a calibrated snapshot stores its budget figures (Snapshot.summary)


@dataclass(frozen=True)
class BudgetInputs:
    series: list[JudgeRun]
    rows: list[BudgetRow]
    routes: list[str]  # condition names, each with its route: "standard (default routing)", "route-b (provider-b)"
    left_out: list[str]  # conditions that differ in more than the route


def _route_conditions(condition_ids: set[int]) -> tuple[list[GenerationCondition], list[GenerationCondition]]:
    """(the conditions used as routes, the ones left out): grouped by every setting but the route."""
    conditions = list(GenerationCondition.objects.filter(pk__in=condition_ids).order_by("name"))
    groups: dict[tuple, list[GenerationCondition]] = defaultdict(list)
    for c in conditions:
        settings = {axis: value for axis, value in c.settings_dict().items() if axis != "route"}
        groups[tuple(sorted(settings.items()))].append(c)
    if not groups:
        return [], []
    chosen = max(groups.values(), key=lambda g: (any(c.is_standard for c in g), len(g)))
    return chosen, [c for c in conditions if c not in chosen]


def budget_inputs_read(*, run: JudgeRun) -> BudgetInputs:
    """The rows of the run's series for the budget (`variance.py`'s docstring): one query per judge run plus three."""
    series = judge_run_series(run=run)
    if run not in series:
        series = [run, *series]
    judged = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    responses = list(ModelResponse.objects.filter(pk__in=judged).order_by("pk").values_list(
        "pk", "model__name", "test_case_id", "test_case__difficulty", "condition_id", "repetition"))
    routes, left_out = _route_conditions({r[4] for r in responses})
    name_of = {c.pk: c.name for c in routes}
    weight_of = {d: float(difficulty_weight(d)) for d in Difficulty.values}
    rows = []
    for member in series:
        scores = judge_decisive_scored(run=member, response_ids=judged)
        for pk, model, case, difficulty, condition, repetition in responses:
            result = scores.get(pk)
            if condition in name_of and result is not None and result.composite is not None:
                rows.append(BudgetRow(model, case, weight_of[difficulty], name_of[condition], repetition, member.pk,
                                      round(float(result.composite), 6)))
    return BudgetInputs(series, rows, [f"{c.name} ({c.route or 'default routing'})" for c in routes],
                        [c.name for c in left_out])


def variance_budget_stored(*, run: JudgeRun) -> BudgetPage | None:
    """The variance budget stored with the run's newest ready calibrated version that has one (one query, no
    payload read); None when no version stored one."""
    snapshot = (Snapshot.objects.of(Snapshot.Kind.CALIBRATED, run.pk).ready()
                .filter(summary__has_key=SUMMARY_BUDGET_KEY).only("pk", "version", "summary")
                .order_by("-version").first())
    if snapshot is None:
        return None
    figures = BudgetFigures.from_json(snapshot.summary[SUMMARY_BUDGET_KEY])
    return BudgetPage(run=run, series=figures.series, calibrated_version=snapshot.version, models=figures.models)
