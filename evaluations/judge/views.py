"""Staff pages of the judge pipeline: start runs (form, confirmation with the estimate), run list, run progress
(htmx-polled) with what happened, cancel / resume / retry / repeat, leaderboard."""
from __future__ import annotations

from typing import TypedDict

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from access.policy import Action, policy_required
from access.web import query_page, query_whole_number

from ..models import JudgeRun
from .conditions import (
    ConditionReport,
    condition_delta_svg,
    condition_report_cached,
    condition_report_csv,
    judge_run_latest_with_conditions,
    judge_runs_finished_recent,
)
from .config import setting
from .estimate import judge_run_estimate_cached
from .forms import JudgeRunResumeForm
from .leaderboard import Leaderboard, ModelRow, Score
from .selectors import (
    judge_run_call_stats,
    judge_run_find,
    judge_run_latest_finished,
    judge_run_or_404,
    judge_run_series_others,
    judge_run_summary,
    judge_runs_page,
    judge_runs_recent,
    leaderboard_cached,
    leaderboard_series_spread,
)
from .services import judge_run_cancel
from .status import api_key_configured, judge_run_errors, judge_run_outcome

POLL_SECONDS = 2


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def run_list(request: HttpRequest) -> HttpResponse:
    """The judge runs, newest first, a page at a time, with their status and progress."""
    page = query_page(request.GET.get("page"))
    if page is None:
        raise Http404("no such page")
    found = judge_runs_page(page=page)
    has_key = api_key_configured()
    for run in found.runs:
        run.outcome = judge_run_outcome(run=run, has_key=has_key, explain=False)  # type: ignore[attr-defined]
    first_raw, _, last_raw = request.GET.get("started", "").partition("-")
    first, last = query_whole_number(first_raw), query_whole_number(last_raw)
    started = range(first, last + 1) if first is not None and last is not None and first < last else range(0)
    return render(request, "evaluations/judge/run_list.html",
                  {"runs": found.runs, "page_obj": found, "started": started})


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One run's progress bar and summary; htmx polls the "progress" partial while the run is active."""
    run = judge_run_or_404(pk=pk, related=("rubric", "created_by"))
    context = {"run": run, "summary": None if run.is_active else judge_run_summary(run=run),
               "calls": judge_run_call_stats(run=run), "poll_seconds": POLL_SECONDS,
               "outcome": judge_run_outcome(run=run),
               "errors_sentence": judge_run_errors(run=run).sentence(max_attempts=int(setting("RETRY_ATTEMPTS"))),
               "resume_form": JudgeRunResumeForm(),
               "series": judge_run_series_others(run=run),
               "estimate": judge_run_estimate_cached(run=run) if run.status == JudgeRun.Status.QUEUED else None}
    template = "evaluations/judge/run_detail.html"
    partial = bool(getattr(request, "htmx", False))  # set by django_htmx's middleware
    return render(request, f"{template}#progress" if partial else template, context)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask a queued or running run to stop."""
    run = get_object_or_404(JudgeRun, pk=pk)
    try:
        judge_run_cancel(run=run)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("judge:run_detail", pk=run.pk)


class MatrixRow(TypedDict):
    model: str
    cells: list[Score | None]


class LeaderboardContext(TypedDict, total=False):
    run: JudgeRun | None
    runs: QuerySet[JudgeRun]
    board: Leaderboard
    rows: list[tuple[ModelRow, float | None]]
    series: list[JudgeRun]
    spread: list[float | None]
    dimensions: list[str]
    dimension_rows: list[MatrixRow]
    traditions: list[str]
    tradition_rows: list[MatrixRow]


class ConditionsContext(TypedDict, total=False):
    run: JudgeRun | None
    runs: list[JudgeRun]
    report: ConditionReport
    delta_plot: str


def _matrix(board: Leaderboard, attribute: str) -> tuple[list[str], list[MatrixRow]]:
    keys = sorted({key for row in board.models for key in getattr(row, attribute)})
    rows: list[MatrixRow] = [{"model": row.model, "cells": [getattr(row, attribute).get(key) for key in keys]}
                             for row in board.models]
    return keys, rows


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def leaderboard(request: HttpRequest) -> HttpResponse:
    """Per-model scores of one run (default: the newest finished run), with intervals and comparisons."""
    raw = request.GET.get("run")
    run = _run_asked(raw, finished=False) if raw else judge_run_latest_finished(skip_trials=True)
    if isinstance(run, HttpResponseBadRequest):
        return run
    context: LeaderboardContext = {"run": run, "runs": judge_runs_recent(limit=20)}
    if run is not None:
        board = leaderboard_cached(run=run)
        context["board"] = board
        series, spread = leaderboard_series_spread(run=run, board=board)
        context["rows"] = list(zip(board.models, spread or [None] * len(board.models), strict=True))
        if spread is not None:
            context["series"], context["spread"] = series, spread
        context["dimensions"], context["dimension_rows"] = _matrix(board, "by_dimension")
        context["traditions"], context["tradition_rows"] = _matrix(board, "by_tradition")
    return render(request, "evaluations/judge/leaderboard.html", context)


def _run_asked(raw: str, *, finished: bool) -> JudgeRun | HttpResponseBadRequest:
    """The run a `?run=` names, or a 400 saying what is wrong with the value (not a number, no such run, not
    finished where only finished runs have this page)."""
    run_id = query_whole_number(raw)
    if run_id is None:
        return HttpResponseBadRequest(f"run: must be a judge run id (a whole number), got {raw[:20]!r}")
    run = judge_run_find(run_id=run_id)
    if run is None:
        return HttpResponseBadRequest(f"run: there is no judge run {run_id}")
    if finished and run.status != JudgeRun.Status.FINISHED:
        return HttpResponseBadRequest(f"run: judge run {run_id} is {run.get_status_display().lower()}; this page "
                                      "compares finished runs only")
    return run


def _run_or_latest(raw: str | None) -> JudgeRun | HttpResponseBadRequest | None:
    return _run_asked(raw, finished=True) if raw else judge_run_latest_with_conditions()


@policy_required(Action.VIEW_CONDITIONS)
def conditions(request: HttpRequest) -> HttpResponse:
    """A finished run's leaderboard per generation condition and the paired deltas between conditions."""
    run = _run_or_latest(request.GET.get("run"))
    if isinstance(run, HttpResponseBadRequest):
        return run
    context: ConditionsContext = {"run": run, "runs": judge_runs_finished_recent(limit=20)}
    if run is not None:
        report = condition_report_cached(run=run)
        context["report"] = report
        context["delta_plot"] = condition_delta_svg(report.deltas, title="Paired deltas between conditions")
    return render(request, "evaluations/judge/conditions.html", context)


@policy_required(Action.VIEW_CONDITIONS)
def conditions_export(request: HttpRequest, run_id: int) -> HttpResponse:
    """The per-condition leaderboards and the deltas of one finished run as CSV."""
    run = get_object_or_404(JudgeRun, pk=run_id, status=JudgeRun.Status.FINISHED)
    response = HttpResponse(condition_report_csv(condition_report_cached(run=run)), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="judge-run-{run.pk}-conditions.csv"'
    return response
