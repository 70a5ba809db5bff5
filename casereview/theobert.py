"""The TheoBERT expert audit: experts judge a scored case (is it sound? is the verdict right?); agreement among
them and with the automatic scorer (Cohen's κ with bootstrap intervals); rejected cases left out of a re-scored
run, shown beside the original.

The audit page reads stored figures: the run's summary (stored when it is scored, evaluations.theobert.services)
and its audit figures, recomputed by the worker when an audit is submitted (`audit_figures_refresh`, through
tasks.py). The stored audit figures carry a fingerprint of the submitted audits they came from; a page
that finds another fingerprint (the worker has not caught up, or an audit changed elsewhere such as the Django
admin) recomputes and stores them once (`audit_figures_read`)."""
from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypedDict, cast

import numpy as np

from evaluations.models import TheoBertRun
from evaluations.theobert.scoring import Prediction
from evaluations.theobert.services import (
    TheoBertSummary,
    theobert_run_score,
    theobert_run_summary,
    theobert_run_summary_stored,
)
from stats.intervals import agreement_interval

from .models import TheoBertAudit

ANSWER_CODE = {"no": 0.0, "unsure": 1.0, "yes": 2.0}
AUDIT_RESAMPLES = 500  # the stored agreement's bootstrap


class KappaFigure(TypedDict):
    kappa: float | None
    interval: list[float | None] | None
    units: int
    note: str


class ScorerKappa(KappaFigure):
    agreement: float | None


class AmongExperts(TypedDict):
    case_sound: KappaFigure
    verdict_right: KappaFigure


class AuditAgreement(TypedDict):
    """Agreement among the auditors and with the scorer, and the cases they reject (stored as JSON)."""

    audits: int
    cases: int
    among_experts: AmongExperts
    experts_vs_scorer: ScorerKappa
    rejected: list[str]


class AuditFigures(TypedDict):
    key: str
    agreement: AuditAgreement


class SideBySideRow(TypedDict):
    axis: str
    group: str
    before: Mapping[str, object]
    after: Mapping[str, object] | None


def audit_figures_key(run: TheoBertRun) -> str:
    """A fingerprint of the run's submitted audits and their answers (what the audit figures are computed from)."""
    digest = hashlib.sha256()
    for row in (TheoBertAudit.objects.filter(result__run=run, submitted_at__isnull=False).order_by("pk")
                .values_list("pk", "case_sound", "verdict_right")):
        digest.update(repr(row).encode())
    return digest.hexdigest()


def audit_figures_refresh(*, run: TheoBertRun) -> AuditAgreement:
    """Compute the run's audit figures (agreement, rejected cases) and store them with their fingerprint."""
    figures = AuditFigures(key=audit_figures_key(run),
                           agreement=_json_safe(audit_agreement(run, n_resamples=AUDIT_RESAMPLES)))
    TheoBertRun.objects.filter(pk=run.pk).update(audit_figures=figures)
    run.audit_figures = figures
    return figures["agreement"]


def _json_safe(value: Any) -> Any:
    """Numbers as JSON stores them everywhere (PostgreSQL's jsonb has no NaN): a non-finite float becomes None."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    return value


def audit_figures_read(run: TheoBertRun) -> AuditAgreement:
    """The stored audit figures of the run; recomputed (and stored) only when its audits changed since."""
    stored = run.audit_figures or {}
    if stored.get("key") == audit_figures_key(run) and "agreement" in stored:
        return cast(AuditAgreement, dict(stored["agreement"]))
    return audit_figures_refresh(run=run)


def rejected_cases(run: TheoBertRun) -> list[str]:
    """Case ids a majority of their auditors call unsound."""
    answers: dict[str, list[str]] = defaultdict(list)
    for case_id, sound in (TheoBertAudit.objects.filter(result__run=run, submitted_at__isnull=False)
                           .values_list("result__case__case_id", "case_sound")):
        answers[case_id].append(sound)
    return sorted(c for c, a in answers.items() if a.count("no") * 2 > len(a))


def audit_agreement(run: TheoBertRun, *, n_resamples: int = 1000, seed: int = 0) -> AuditAgreement:
    """Among experts: Fleiss' κ on each question (cases with ≥ 2 audits). Experts vs scorer: Cohen's κ between the
    scorer's pass/fail and the outcome the experts' majority implies (the scorer's if they call the verdict right,
    the opposite if wrong; ties and "unsure" majorities left out). Intervals: percentile bootstrap over cases."""
    audits = list(TheoBertAudit.objects.filter(result__run=run, submitted_at__isnull=False)
                  .select_related("result").order_by("result_id", "expert_id"))
    by_result: dict[int, list[TheoBertAudit]] = defaultdict(list)
    for audit in audits:
        by_result[audit.result_id].append(audit)
    among: dict[str, KappaFigure] = {}
    for question in ("case_sound", "verdict_right"):
        units = [group for group in by_result.values() if len(group) >= 2]
        width = max((len(g) for g in units), default=0)
        matrix = np.full((width, len(units)), np.nan)
        for j, group in enumerate(units):
            for i, audit in enumerate(group):
                matrix[i, j] = ANSWER_CODE[getattr(audit, question)]
        among[question] = _interval(matrix, "fleiss_kappa", [0.0, 1.0, 2.0], n_resamples, seed)
    scorer, experts = [], []
    for group in by_result.values():
        right = sum(a.verdict_right == "yes" for a in group)
        wrong = sum(a.verdict_right == "no" for a in group)
        if right == wrong:
            continue
        passed = group[0].result.passed
        scorer.append(1.0 if passed else 0.0)
        experts.append((1.0 if passed else 0.0) if right > wrong else (0.0 if passed else 1.0))
    pair = np.array([scorer, experts]) if scorer else np.empty((2, 0))
    versus = ScorerKappa(**_interval(pair, "cohen_kappa_unweighted", [0.0, 1.0], n_resamples, seed),
                         agreement=float(np.mean(pair[0] == pair[1])) if scorer else None)
    return AuditAgreement(audits=len(audits), cases=len(by_result),
                          among_experts=AmongExperts(case_sound=among["case_sound"],
                                                     verdict_right=among["verdict_right"]),
                          experts_vs_scorer=versus, rejected=rejected_cases(run))


def _interval(matrix: np.ndarray, coefficient: str, categories: list[float], n_resamples: int,
              seed: int) -> KappaFigure:
    """κ with its percentile interval from the unit bootstrap every agreement figure uses (stats.intervals)."""
    if matrix.shape[1] < 2:
        return KappaFigure(kappa=None, interval=None, units=int(matrix.shape[1]), note="fewer than two cases")
    try:
        result = agreement_interval(matrix, coefficient, categories=categories, n_resamples=n_resamples, seed=seed)
    except ValueError as exc:
        return KappaFigure(kappa=None, interval=None, units=int(matrix.shape[1]), note=str(exc))
    estimate = result.estimate
    note = "" if estimate is not None else "κ is undefined: every answer was the same"
    return KappaFigure(kappa=estimate, interval=list(result.interval) if result.interval is not None else None,
                       units=int(matrix.shape[1]), note=note)


class _StoredPredictions:
    """The predictions a run stored, as a source: re-scoring needs no model and no file."""

    def __init__(self, run: TheoBertRun):
        self.label = run.label
        self.by_case = {r.case.case_id: Prediction(case_id=r.case.case_id,
                                                   ranked=tuple((w, float("nan") if p is None else p) for w, p in r.ranked),
                                                   probabilities=r.probabilities)
                        for r in run.results.select_related("case")}

    def predict(self, cases: Sequence[Any], *, top: int, progress: Any = None) -> Iterator[Prediction]:
        for case in cases:
            yield self.by_case[case.case_id]


def rescore_without_rejected(*, run: TheoBertRun, user: Any = None) -> TheoBertRun:
    """A new run from the stored predictions of `run`, leaving out the cases the experts rejected."""
    rejected = rejected_cases(run)
    cases = [r.case for r in run.results.select_related("case").exclude(case__case_id__in=rejected)]
    return theobert_run_score(source=_StoredPredictions(run), kind=run.source, source_name=run.source_name,
                              cases=cases, k=run.k_override, exclude=rejected, rescored_from=run, user=user)


def side_by_side(run: TheoBertRun, rescored: TheoBertRun | None, *, n_resamples: int | None = None
                 ) -> list[SideBySideRow]:
    """Each group's figures before and after re-scoring: the stored summaries, or computed anew with `n_resamples`."""
    def summary(of: TheoBertRun) -> TheoBertSummary:
        return theobert_run_summary_stored(of) if n_resamples is None else theobert_run_summary(of, n_resamples=n_resamples)

    before = {(g["axis"], g["group"]): g for g in summary(run)["groups"]}
    after = {(g["axis"], g["group"]): g for g in summary(rescored)["groups"]} if rescored else {}
    return [SideBySideRow(axis=axis, group=group, before=row, after=after.get((axis, group)))
            for (axis, group), row in before.items() if axis != "cell"]
