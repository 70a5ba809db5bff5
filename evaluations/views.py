"""Pages of the benchmark-data app, and the judge pages that queue work for the worker (start, resume, retry, repeat a
run): they sit here, above `tasks`, because the judge package below it cannot enqueue."""
from __future__ import annotations

from typing import Any, TypedDict

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access.policy import Action, policy_required

from .judge.config import setting
from .judge.estimate import judge_runs_plan
from .judge.forms import JudgeRunResumeForm, JudgeRunStartForm
from .judge.services import judge_run_repeat, judge_run_resume, judge_run_retry_failed
from .judge.status import api_key_configured, endpoint_is_local
from .models import JudgeRun
from .tasks import judge_run_enqueue, judge_runs_start


def home(request: HttpRequest) -> HttpResponse:
    """/evaluations/ is the home page (config.home), kept as an address."""
    return redirect("home")


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def run_start(request: HttpRequest) -> HttpResponse:
    """Start judge runs: the form; then (POST) the confirmation with the estimate; then (POST "start") the runs,
    queued for the worker. One run goes to its progress page, several to the run list."""
    if request.method != "POST":
        return render(request, "evaluations/judge/run_start.html", {"form": JudgeRunStartForm(), **_endpoint()})
    form = JudgeRunStartForm(request.POST)
    if form.is_valid() and "edit" not in request.POST:
        rubric, judges, repeats = form.cleaned_data["rubric"], form.judges(), form.cleaned_data["repeats"]
        try:
            if "start" in request.POST:
                runs = judge_runs_start(rubric=rubric, judges=judges, repeats=repeats, created_by=request.user,
                                        **form.selection())
                if len(runs) == 1:
                    return redirect(runs[0].get_absolute_url())
                return redirect(f"{reverse('judge:run_list')}?started={runs[0].pk}-{runs[-1].pk}")
            plan = judge_runs_plan(rubric=rubric, judges=judges, repeats=repeats, **form.selection())
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            return render(request, "evaluations/judge/run_confirm.html",
                          {"form": form, "plan": plan, "budget": form.cleaned_data["budget"], **_endpoint()})
    status = 200 if "edit" in request.POST else 422
    return render(request, "evaluations/judge/run_start.html", {"form": form, **_endpoint()}, status=status)


class EndpointContext(TypedDict):
    """What the run pages say about the endpoint the runs will call."""

    base_url: str
    has_key: bool
    local_endpoint: bool


def _endpoint() -> EndpointContext:
    base_url = str(setting("LLM_BASE_URL"))
    return {"base_url": base_url, "has_key": api_key_configured(), "local_endpoint": endpoint_is_local(base_url)}


def _endpoint_note(request: HttpRequest, before: str, now: str) -> None:
    """Resume and Retry send to the endpoint configured now; the page says so when the run called another one."""
    if before != now:
        messages.info(request, f"The run now calls the configured endpoint {now} (it called {before}).")


def _run_action(request: HttpRequest, pk: int, act: Any) -> HttpResponse:
    run = get_object_or_404(JudgeRun, pk=pk)
    try:
        act(run)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("judge:run_detail", pk=run.pk)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a stopped run again: only its items without a result are sent (optionally with a higher budget)."""
    form = JudgeRunResumeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()))
        return redirect("judge:run_detail", pk=pk)

    def act(run: JudgeRun) -> None:
        before, now = run.base_url, str(setting("LLM_BASE_URL"))
        judge_run_enqueue(run=judge_run_resume(run=run, budget=form.cleaned_data["budget"], base_url=now))
        _endpoint_note(request, before, now)

    return _run_action(request, pk, act)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def run_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a stopped run's failed items again (and its items without a result), optionally with a higher budget."""
    form = JudgeRunResumeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()))
        return redirect("judge:run_detail", pk=pk)

    def act(run: JudgeRun) -> None:
        before, now = run.base_url, str(setting("LLM_BASE_URL"))
        judge_run_enqueue(run=judge_run_retry_failed(run=run, budget=form.cleaned_data["budget"], base_url=now)[0])
        _endpoint_note(request, before, now)

    return _run_action(request, pk, act)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def run_repeat(request: HttpRequest, pk: int) -> HttpResponse:
    """Another run of the same judges on the same responses, in this run's series (§8.4)."""
    run = get_object_or_404(JudgeRun, pk=pk)
    repeat = judge_run_repeat(run=run, created_by=request.user)
    judge_run_enqueue(run=repeat)
    return redirect(repeat.get_absolute_url())


