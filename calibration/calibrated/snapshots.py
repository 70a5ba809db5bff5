"""The calibrated leaderboard as a snapshot, through the report machinery: versions per judge run in request order,
computed by the worker from one read of the rows, stored with its input hash, seed, software and files, never
edited. A run with a version queued or computing cannot queue another.

One compute, three steps, each from its own inputs: the leaderboard (inputs.csv → report.json and its files), the
variance budget (variance_budget_inputs.csv and the leaderboard's shifts → variance_budget.csv, and the figures the
budget page reads, stored in the snapshot's `summary`), and the per-condition tables (the run's judge results →
conditions.csv)."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse

from accounts.models import User
from annotations.models import CalibrationCycle
from evaluations.judge.conditions import condition_report_build, condition_report_csv
from evaluations.judge.guardrails import min_cases
from evaluations.models import JudgeRun
from evidence.kit.files import download_name
from evidence.kit.meta import software_versions
from evidence.models import Snapshot
from evidence.registry import KindSpec, Progress
from evidence.services import bootstrap_option_errors, snapshot_request, snapshot_run, snapshot_store

from .budget import BudgetFigures, budget_compute, report_shifts
from .budget_files import budget_inputs_csv, variance_budget_csv
from .build import DEFAULT_MARGIN, DEFAULT_TARGET_HALF_WIDTH, Options, calibrated_leaderboard_build
from .checks import calibrated_check
from .files import files_render, inputs_csv
from .schema import CalibratedReport, SnapshotRef
from .selectors import (
    SUMMARY_BUDGET_KEY,
    BudgetInputs,
    CalibratedInputs,
    budget_inputs_read,
    calibrated_inputs,
)

DEFAULT_SEED = 20260101
DEFAULT_RESAMPLES = 1000


@transaction.atomic
def calibrated_snapshot_request(
    *, run: JudgeRun, cycle: CalibrationCycle, requested_by: User | None, seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_RESAMPLES, target_half_width: float = DEFAULT_TARGET_HALF_WIDTH,
    margin: float = DEFAULT_MARGIN,
) -> Snapshot:
    """Queue the next version of a run's calibrated leaderboard, corrected by `cycle`'s expert scores."""
    errors = bootstrap_option_errors(seed=seed, n_resamples=n_resamples)
    if cycle.rubric_id != run.rubric_id:
        errors["cycle"] = [f"cycle “{cycle.name}” is on another rubric than judge run #{run.pk}"]
    if cycle.kind != CalibrationCycle.Kind.STANDARD:
        errors["cycle"] = ["a cross-tradition cycle is scored by other panels: choose a standard cycle"]
    if run.status != JudgeRun.Status.FINISHED:
        errors["run"] = [f"judge run #{run.pk} is {run.get_status_display().lower()}, not finished"]
    if not 0 < target_half_width <= 1:
        errors["target_half_width"] = ["must be between 0 and 1 (composite points)"]
    problem = margin_problem(margin)
    if problem:
        errors["margin"] = [problem]
    if errors:
        raise ValidationError(errors, code="invalid")
    run = JudgeRun.objects.select_for_update().get(pk=run.pk)  # versions are handed out in order
    return snapshot_request(kind=Snapshot.Kind.CALIBRATED, subject=run.pk, requested_by=requested_by, seed=seed,
                            n_resamples=n_resamples, judge_run=run, label_cycle=cycle,
                            input_counts={"target_half_width": target_half_width, "margin": float(margin)})


def margin_problem(margin: object) -> str | None:
    """Why an equivalence margin cannot be used, in words (None: it can): it lies strictly inside (0, 1)."""
    if not isinstance(margin, int | float) or isinstance(margin, bool) or margin != margin:
        return "the equivalence margin must be a number of composite points, e.g. 0.05"
    if margin <= 0:
        return (f"the equivalence margin must be above 0 (got {margin:g}): no interval fits inside ±0, so no pair "
                "could ever be called equivalent")
    if margin >= 1:
        return (f"the equivalence margin must be below 1, the range of the 0–1 composite scale (got {margin:g}): "
                "every pair would be 'equivalent' before any label")
    return None


def calibrated_snapshot_compute(
    *, snapshot_id: int, progress: Callable[[int, str], None] | None = None,
) -> Snapshot:
    """Compute a queued calibrated leaderboard and store it with its files; safe to call twice."""
    return snapshot_run(snapshot_id=snapshot_id, progress=progress)


def options_for(snapshot: Snapshot, *, seconds_per_item: float | None,
                judge_families: tuple[str, ...], severity_notes: tuple[str, ...] | None = None) -> Options:
    margin = (snapshot.input_counts or {}).get("margin", DEFAULT_MARGIN)
    return Options(seed=snapshot.seed, n_resamples=snapshot.n_resamples,
                   margin=float(margin) if margin_problem(margin) is None else DEFAULT_MARGIN,
                   target_half_width=float((snapshot.input_counts or {}).get("target_half_width",
                                                                           DEFAULT_TARGET_HALF_WIDTH)),
                   seconds_per_item=seconds_per_item, judge_families=judge_families, severity_notes=severity_notes,
                   min_cases=min_cases())


@dataclass(frozen=True)
class _Leaderboard:
    """The leaderboard step's result: the tree, its inputs.csv bytes and their hash, the options it ran with."""

    report: CalibratedReport
    inputs: bytes
    input_hash: str
    options: Options


def _leaderboard_step(snapshot: Snapshot, inputs: CalibratedInputs) -> _Leaderboard:
    """inputs.csv → the calibrated leaderboard, stamped with the snapshot it belongs to."""
    run, cycle = snapshot.judge_run, snapshot.label_cycle
    assert run is not None and cycle is not None, "a calibrated leaderboard snapshot"
    data = inputs_csv(inputs.rows)
    input_hash = hashlib.sha256(data).hexdigest()
    options = options_for(snapshot, seconds_per_item=inputs.seconds_per_item, judge_families=inputs.judge_families,
                          severity_notes=inputs.severity_notes)
    report = calibrated_leaderboard_build(inputs.rows, options)
    report.meta.snapshot = SnapshotRef(version=snapshot.version, input_hash=input_hash, input_file="inputs.csv",
                                       judge_run=run.pk, judge=run.primary_model, cycle=cycle.name, cycle_id=cycle.pk)
    return _Leaderboard(report=report, inputs=data, input_hash=input_hash, options=options)


def _budget_step(report: CalibratedReport, inputs: BudgetInputs) -> tuple[BudgetFigures, dict[str, bytes]]:
    """variance_budget_inputs.csv and this version's shifts → the budget: (the figures stored for the page, the
    bundle's two files)."""
    models = budget_compute(inputs.rows, shifts=report_shifts(report), left_out=inputs.left_out,
                            route_labels=inputs.routes)
    figures = BudgetFigures(series=[member.pk for member in inputs.series], models=models)
    return figures, {"variance_budget.csv": variance_budget_csv(models),
                     "variance_budget_inputs.csv": budget_inputs_csv(inputs.rows)}


def _conditions_step(snapshot: Snapshot, run: JudgeRun) -> dict[str, bytes]:
    """The per-condition leaderboards and deltas of the run, with the version's seed and resamples."""
    conditions = condition_report_build(run=run, n_resamples=snapshot.n_resamples, seed=snapshot.seed)
    return {"conditions.csv": condition_report_csv(conditions).encode("utf-8")}


def _compute(snapshot: Snapshot, reporter: Progress) -> None:
    run, cycle = snapshot.judge_run, snapshot.label_cycle
    assert run is not None and cycle is not None, "a calibrated leaderboard snapshot"
    with transaction.atomic():  # one consistent read of the run and the cycle
        inputs = calibrated_inputs(run=run, cycle=cycle)
        budget_inputs = budget_inputs_read(run=run)
    reporter(20, "estimating the calibrated scores", force=True)
    board = _leaderboard_step(snapshot, inputs)
    budget, budget_files = _budget_step(board.report, budget_inputs)
    reporter(80, "per-condition leaderboards and deltas", force=True)
    conditions_files = _conditions_step(snapshot, run)
    reporter(85, "rendering the files", force=True)
    files = files_render(report=board.report, inputs=board.inputs, title=f"judge run #{run.pk}, cycle {cycle.name}",
                         version=snapshot.version, input_hash=board.input_hash,
                         context={"run": run.pk, "judge": run.primary_model, "cycle": cycle.name,
                                  "cycle_id": cycle.pk},
                         bundle_only={**budget_files, **conditions_files})
    payload = board.report.to_json()  # the one handoff to storage: the typed tree's JSON
    counts: dict[str, Any] = {**payload["counts"], "target_half_width": board.options.target_half_width,
                              "margin": board.options.margin}
    snapshot_store(snapshot=snapshot, files=files, payload=payload, input_hash=board.input_hash, input_counts=counts,
                   software=software_versions(), summary={SUMMARY_BUDGET_KEY: budget.to_json()})


def calibrated_file_name(snapshot: Snapshot, fmt: str) -> str:
    """The download's file name of a calibrated leaderboard's file: judge run, version and what it is."""
    return download_name(fmt=fmt, stem="calibrated-leaderboard", inputs_stem="inputs",
                         subject=f"run-{snapshot.judge_run_id}", version=snapshot.version)


# Registered by CalibrationConfig.ready.
CALIBRATED_KIND = KindSpec(
    kind=Snapshot.Kind.CALIBRATED, compute=_compute, file_name=calibrated_file_name,
    select_related=("judge_run", "label_cycle"), check=calibrated_check,
    page_url=lambda s: f"{reverse('calibrated:board', kwargs={'run_id': s.judge_run_id})}?version={s.version}")
