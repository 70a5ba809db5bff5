"""The calibrated leaderboard's pages: a run's stored versions side by side with the judge-only board, the form that
queues a new version (admins), its progress, and downloads. Nothing is computed in a request."""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from access.policy import Action, allowed, policy_required
from access.web import query_whole_number
from accounts.http import AuthedRequest
from evaluations.judge.selectors import judge_run_latest_finished
from evaluations.models import JudgeRun
from evidence.models import Snapshot
from evidence.selectors import snapshot_is_stale, snapshot_versions
from evidence.views import snapshot_download_response, snapshot_page_response, snapshot_progress_response
from stats.variance_budget import GROUP_LABELS

from .budget_files import variance_budget_csv
from .build import DEFAULT_MARGIN
from .charts import GROUP_COLOURS, history_chart
from .forms import CalibratedRequestForm
from .history import History, score_history, score_history_csv
from .render import board_rows, budget_rows, cell_rows, interval_axis, pair_rows, severity_view
from .schema import CalibratedReport
from .selectors import (
    calibrated_runs,
    calibrated_runs_finished,
    calibrated_snapshot_for,
    calibrated_snapshots,
    variance_budget_stored,
)
from .tasks import calibrated_snapshot_start


def _run(run_id: int) -> JudgeRun:
    return get_object_or_404(calibrated_runs(), pk=run_id)


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def index(request: AuthedRequest) -> HttpResponse:
    """The asked-for run's calibrated leaderboard (?run=ID, the page's picker), else the newest finished run's."""
    raw = request.GET.get("run", "")
    if raw:
        run_id = query_whole_number(raw)
        if run_id is None:
            return HttpResponseBadRequest(f"run: must be a judge run id (a whole number), got {raw[:20]!r}")
        return redirect("calibrated:board", run_id=run_id)
    run = judge_run_latest_finished(skip_trials=True)  # issue 32: a trial run is listed, never the default
    if run is None:
        return render(request, "calibration/calibrated/board.html", {"run": None, "runs": []})
    return redirect("calibrated:board", run_id=run.pk)


def _context(request: AuthedRequest, run: JudgeRun, snapshot: Snapshot | None,
             form: CalibratedRequestForm | None) -> dict[str, Any]:
    versions = list(calibrated_snapshots(run=run))
    pending = next((s for s in versions if s.is_pending), None)
    context: dict[str, Any] = {
        "run": run, "snapshot": snapshot, "versions": versions, "pending": pending,
        "pending_stale": bool(pending and snapshot_is_stale(snapshot=pending)),
        "progress_url": reverse("calibrated:progress", args=[run.pk, pending.version]) if pending else "",
        "runs": calibrated_runs_finished(limit=50),
        "form": form if allowed(request.user, Action.MANAGE_CALIBRATION) else None,
    }
    if snapshot is not None and snapshot.is_ready:
        report = CalibratedReport.from_json(snapshot.payload or {})  # the stored JSON read back into the tree
        axis = interval_axis(report)
        context.update({
            "report": report, "rows": board_rows(report, axis), "pairs": pair_rows(report),
            "dimension_cells": cell_rows(report, "by_dimension"),
            "tradition_cells": cell_rows(report, "by_tradition"),
            "language_cells": cell_rows(report, "by_language"),
        })
        context["severity"] = severity_view(report)  # issue 34 §6: truth with rater severity
    return context


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def board(request: AuthedRequest, run_id: int) -> HttpResponse:
    run = _run(run_id)
    return snapshot_page_response(
        request, find=lambda version: calibrated_snapshot_for(run=run, version=version),
        missing=f"Judge run {run.pk} has no calibrated leaderboard version {{version}}.",
        page=lambda snapshot: render(request, "calibration/calibrated/board.html",
                                     _context(request, run, snapshot, CalibratedRequestForm(run=run))))


def _margin(value: float | None) -> float:
    return DEFAULT_MARGIN if value is None else value


@policy_required(Action.MANAGE_CALIBRATION)
@require_POST
def compute(request: AuthedRequest, run_id: int) -> HttpResponse:
    """Queue a new version; the worker computes it while the page shows its progress."""
    run = _run(run_id)
    form = CalibratedRequestForm(request.POST, run=run)
    if form.is_valid():
        try:
            snapshot = calibrated_snapshot_start(
                run=run, cycle=form.cleaned_data["cycle"], requested_by=request.user,
                seed=form.cleaned_data["seed"], n_resamples=form.cleaned_data["n_resamples"],
                target_half_width=form.cleaned_data["target_half_width"], margin=_margin(form.cleaned_data["margin"]),
            )
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, f"Version {snapshot.version} of the calibrated leaderboard is being computed.")
            return redirect("calibrated:board", run_id=run.pk)
    return render(request, "calibration/calibrated/board.html",
                  _context(request, run, calibrated_snapshot_for(run=run), form), status=422)


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def progress(request: AuthedRequest, run_id: int, version: int) -> HttpResponse:
    snapshot = get_object_or_404(snapshot_versions(kind=Snapshot.Kind.CALIBRATED, subject=run_id), version=version)
    return snapshot_progress_response(request, snapshot, reverse("calibrated:progress", args=[run_id, version]))


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def download(request: AuthedRequest, run_id: int, fmt: str) -> HttpResponse:
    """A stored file of a version (?version=N, default the newest ready one): the same bytes every time."""
    run = _run(run_id)
    return snapshot_download_response(request, fmt, lambda version: calibrated_snapshot_for(run=run, version=version),
                                      subject="judge run's calibrated leaderboard")


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def budget(request: AuthedRequest, run_id: int) -> HttpResponse:
    """Each model's variance budget over the run's series (case, route, generation, judge run, judge error), as
    stored with the run's newest calibrated version that has one."""
    run = _run(run_id)
    page = variance_budget_stored(run=run)
    rows = budget_rows(page) if page is not None else []
    legend = [{"label": GROUP_LABELS[g], "key": g} for g in GROUP_LABELS]
    return render(request, "calibration/calibrated/budget.html",
                  {"page": page, "run": run, "rows": rows, "legend": legend, "colours": GROUP_COLOURS})


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def budget_export(request: AuthedRequest, run_id: int) -> HttpResponse:
    """The stored variance budget as CSV (the bundle's variance_budget.csv); none stored: back to the page."""
    page = variance_budget_stored(run=_run(run_id))
    if page is None:
        messages.info(request, "No calibrated leaderboard version of this run has stored a variance budget yet.")
        return redirect("calibrated:budget", run_id=run_id)
    response = HttpResponse(variance_budget_csv(page.models), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="variance-budget-run-{run_id}.csv"'
    return response


def _history(request: AuthedRequest) -> History | HttpResponseBadRequest:
    """The score history of ?rubric=ID (default: the newest finished run's rubric), or a 400 naming a bad id."""
    raw = request.GET.get("rubric", "")
    rubric_id = query_whole_number(raw) if raw else None
    if raw and rubric_id is None:
        return HttpResponseBadRequest(f"rubric: must be a rubric version id (a whole number), got {raw[:20]!r}")
    return score_history(rubric_id=rubric_id)


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def history(request: AuthedRequest) -> HttpResponse:
    """Each model's score across leaderboard snapshots (?rubric=ID, default the newest finished run's rubric)."""
    data = _history(request)
    if isinstance(data, HttpResponseBadRequest):
        return data
    index_of = {s.run_id: i for i, s in enumerate(data.snapshots)}
    charts = [{"h": h, "svg": history_chart(h.points, len(data.snapshots), index_of, equated=data.rotations_differ,
                                            label=f"Score of {h.model} per snapshot")} for h in data.models]
    return render(request, "calibration/calibrated/history.html",
                  {"history": data, "charts": charts, "index_of": index_of})


@policy_required(Action.VIEW_CALIBRATED)
@require_GET
def history_export(request: AuthedRequest) -> HttpResponse:
    data = _history(request)
    if isinstance(data, HttpResponseBadRequest):
        return data
    response = HttpResponse(score_history_csv(data),
                            content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="score-history.csv"'
    return response
