"""Rows for the calibrated leaderboard: every response a judge run judged, with its expert truth where the cycle
labelled it (the selector step; `build` computes, `snapshots` stores)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from annotations.models import CalibrationCycle
from evaluations.judge.config import judge_family
from evaluations.judge.selectors import judge_decisive_scored
from evaluations.models import JudgeResult, JudgeRun, ModelResponse
from evidence.models import Snapshot

from ..cycles.truth import median_seconds_per_item, response_truths
from .build import InputRow
from .schema import CalibratedReport, Pair

NO_TRADITION = "none"


@dataclass(frozen=True)
class CalibratedInputs:
    rows: list[InputRow]
    seconds_per_item: float | None
    judge_families: tuple[str, ...]


def calibrated_inputs(*, run: JudgeRun, cycle: CalibrationCycle) -> CalibratedInputs:
    """Every response the run judged (scored or not), with the cycle's expert truth and inclusion probability."""
    decisive = judge_decisive_scored(run=run)
    judged = set(JudgeResult.objects.filter(run=run).values_list("response_id", flat=True))
    truths = response_truths(cycle=cycle)
    gold = response_truths(cycle=cycle, basis="gold")
    rows = []
    for response_id, model, family, dimension, tradition, difficulty in (
        ModelResponse.objects.filter(pk__in=judged).order_by("pk").values_list(
            "pk", "model__name", "model__family", "test_case__dimension", "test_case__tradition__key",
            "test_case__difficulty").iterator(chunk_size=5000)
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
        ))
    # self-preference is the primary judge's (methodology §8.2); the fallback answers only on its errors
    families = tuple(f for f in (judge_family(run.primary_model),) if f)
    return CalibratedInputs(rows=rows, seconds_per_item=median_seconds_per_item(cycle=cycle), judge_families=families)


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


def calibrated_evidence_for_cycle(*, cycle: CalibrationCycle) -> EvidenceSummary | None:
    snapshot = (Snapshot.objects.of(Snapshot.Kind.CALIBRATED).ready().filter(label_cycle=cycle).select_related("judge_run")
                .order_by("-finished_at", "-pk").first())
    if snapshot is None or not snapshot.payload:
        return None
    report = CalibratedReport.from_json(snapshot.payload)  # the stored JSON read back into the tree
    models = [EvidenceRow(model=e.model, estimate=e.calibrated.estimate, lower=e.calibrated.lower,
                          upper=e.calibrated.upper, n=e.calibrated.n, more=e.evidence.more_labels,
                          hours=e.evidence.expert_hours) for e in report.models]
    pairs = [p for p in report.pairs if p.adjacent and not p.separated]
    return EvidenceSummary(snapshot=snapshot, models=models, pairs=pairs)
