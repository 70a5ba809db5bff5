"""The validation status page and its exports (admins: it shows judge output)."""
from __future__ import annotations

import io
import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from access.policy import Action, policy_required
from access.web import query_whole_number
from accounts.http import AuthedRequest
from annotations.models import CalibrationCycle
from annotations.selectors import cycle_get
from evaluations.judge.config import setting
from evaluations.judge.estimate import pairwise_run_plan
from evaluations.judge.pairwise import pairwise_run_retry
from evaluations.judge.selectors import (
    judge_runs_by_id,
    judge_runs_finished_choices,
)
from evaluations.judge.status import api_key_configured, endpoint_is_local, pairwise_run_outcome
from evaluations.models import JudgeRun, PairwiseRun
from evaluations.spreadsheet import csv_dict_writer

from .checks import RUNNABLE
from .forms import CheckRunForm, PairwiseStartForm
from .payloads import position_payload
from .position import ALL, position_thin_words
from .selectors import cycle_rows, cycles_with_ready_report
from .status import ValidationStatus, validation_rows, validation_status
from .store import CheckKind, bias_checks
from .tasks import pairwise_run_enqueue, pairwise_run_start, validation_check_start
from .translation import (
    TranslationEquivalence,
    translation_equivalence_build,
    translation_judge_run_default,
    translation_pairs,
)

POLL_SECONDS = 2

FIELDS = ["part", "dimension", "tradition", "value", "ci_low", "ci_high", "n", "n_experts", "state", "date", "source"]


def _status(request: AuthedRequest) -> ValidationStatus | HttpResponse:
    raw = request.GET.get("cycle", "")
    if raw:
        pk = query_whole_number(raw)
        if pk is None:
            return HttpResponseBadRequest("cycle: must be a cycle id (a whole number)")
        return validation_status(cycle=get_object_or_404(CalibrationCycle, pk=pk))
    return validation_status()


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def validation(request: AuthedRequest) -> HttpResponse:
    """Per dimension × tradition: is the judge validated; each bias check: passed, failed, not run."""
    status = _status(request)
    if isinstance(status, HttpResponse):
        return status
    cycles = cycles_with_ready_report(limit=50)
    return render(request, "calibration/validation.html", {"status": status, "cycles": cycles,
                                                           "check_forms": _check_forms()})


def _check_forms(bound: CheckRunForm | None = None) -> dict[str, CheckRunForm]:
    """A form per runnable check kind (one query for the finished runs, one for the cycles)."""
    runs = judge_runs_finished_choices()
    every = cycle_rows(limit=200)
    cycles = {CheckKind.VERBOSITY: [(pk, f"#{pk} {name}") for pk, name, _ in every],
              CheckKind.TRADITION: [(pk, f"#{pk} {name}") for pk, name, kind in every
                                         if kind == CalibrationCycle.Kind.CROSS_TRADITION]}
    forms: dict[str, CheckRunForm] = {str(kind): CheckRunForm(kind=kind, run_choices=runs,
                                                              cycle_choices=cycles.get(kind, []))
                                      for kind in RUNNABLE}
    if bound is not None:
        forms[bound.kind] = bound
    return forms


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def validation_check_run(request: AuthedRequest, kind: str) -> HttpResponse:
    """Queue one check on the worker; the validation page shows it once computed."""
    if kind not in RUNNABLE:
        raise Http404("no such check to run here (position checks start with a pairwise run)")
    form = CheckRunForm(request.POST, kind=kind)
    if form.is_valid():
        data = form.cleaned_data
        ids = [data["run"]] if data.get("run") else list(data.get("runs") or [])
        found = judge_runs_by_id(ids=ids)
        cycle = cycle_get(pk=data["cycle"]) if data.get("cycle") else None
        try:
            validation_check_start(kind=kind, runs=[found[pk] for pk in ids if pk in found], cycle=cycle,
                                   requested_by=request.user)
        except ValidationError as exc:
            if hasattr(exc, "error_dict"):
                for name, errors in exc.error_dict.items():
                    form.add_error(name if name in form.fields else None, errors)
            else:
                form.add_error(None, exc)
        else:
            messages.info(request, f"{CheckKind(kind).label}: queued for the worker. Reload this page in a "
                                   "moment to see the result.")
            return redirect("calibration:validation")
    status = validation_status()
    cycles = cycles_with_ready_report(limit=50)
    return render(request, "calibration/validation.html",
                  {"status": status, "cycles": cycles, "check_forms": _check_forms(form), "open_check": kind},
                  status=422)


def _endpoint() -> dict[str, object]:
    base_url = str(setting("LLM_BASE_URL"))
    return {"base_url": base_url, "has_key": api_key_configured(), "local_endpoint": endpoint_is_local(base_url)}


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def pairwise_start(request: AuthedRequest) -> HttpResponse:
    """Start a pairwise run (position bias, §6.2.1): the form, the confirmation with the estimate, then the run."""
    if request.method != "POST":
        return render(request, "calibration/pairwise_start.html", {"form": PairwiseStartForm(), **_endpoint()})
    form = PairwiseStartForm(request.POST)
    if form.is_valid() and "edit" not in request.POST:
        try:
            if "start" in request.POST:
                run = pairwise_run_start(requested_by=request.user, **form.options())
                return redirect("calibration:pairwise_run", pk=run.pk)
            estimate = pairwise_run_plan(**form.options())
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            return render(request, "calibration/pairwise_start.html",
                          {"form": form, "estimate": estimate, "confirm": True, **_endpoint()})
    return render(request, "calibration/pairwise_start.html", {"form": form, **_endpoint()},
                  status=200 if "edit" in request.POST else 422)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
def pairwise_run(request: AuthedRequest, pk: int) -> HttpResponse:
    """A pairwise run's progress (htmx-polled while active), what happened, and its position check."""
    run = get_object_or_404(PairwiseRun, pk=pk)
    check = bias_checks().filter(pairwise_run=run).first()
    context = {"run": run, "outcome": pairwise_run_outcome(run=run), "check": check, "poll_seconds": POLL_SECONDS,
               "check_overall": (position_payload(check).get("groups") or {}).get(ALL) if check else None,
               "check_trial": bool(check and position_payload(check).get("trial")),
               "thin_words": position_thin_words(check.n or 0) if check else "",
               "active": run.status in (PairwiseRun.Status.QUEUED, PairwiseRun.Status.RUNNING)}
    template = "calibration/pairwise_run.html"
    return render(request, f"{template}#progress" if getattr(request, "htmx", False) else template, context)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_POST
def pairwise_retry(request: AuthedRequest, pk: int) -> HttpResponse:
    """Send a stopped pairwise run's failed calls again, with those it never sent."""
    run = get_object_or_404(PairwiseRun, pk=pk)
    try:
        run, _ = pairwise_run_retry(run=run)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        pairwise_run_enqueue(run=run, requested_by=request.user)
    return redirect("calibration:pairwise_run", pk=run.pk)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def validation_export(request: AuthedRequest, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404(f"Unknown format {fmt[:20]!r}: use csv or json.")
    status = _status(request)
    if isinstance(status, HttpResponse):
        return status
    rows = validation_rows(status)
    if fmt == "json":
        body = json.dumps({"cycle": status.cycle.pk if status.cycle else None,
                           "report_version": status.snapshot.version if status.snapshot else None,
                           "rows": rows}, indent=2, default=str).encode()
        content_type = "application/json"
    else:
        buffer = io.StringIO()
        writer = csv_dict_writer(buffer, FIELDS)
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
        body, content_type = buffer.getvalue().encode(), "text/csv"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="validation-status.{fmt}"'
    return response


TRANSLATION_FIELDS = ["facet", "value", "side", "estimate", "lower", "upper", "n", "verdict", "words"]


def _translation(request: AuthedRequest) -> TranslationEquivalence | HttpResponse:
    """The check for the asked-for judge run (`?run=`), else the newest finished one (issue 35)."""
    raw = request.GET.get("run", "")
    if raw:
        pk = query_whole_number(raw)
        if pk is None:
            return HttpResponseBadRequest("run: must be a judge run id (a whole number)")
        found = judge_runs_by_id(ids=[pk])
        if pk not in found:
            raise Http404(f"No judge run {pk}.")
        run: JudgeRun | None = found[pk]
    else:
        run = translation_judge_run_default()
    return translation_equivalence_build(translation_pairs(run=run), judge_run=run.pk if run else None)


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def translation_equivalence(request: AuthedRequest) -> HttpResponse:
    """For a case and its translation(s): do the experts' scores and the judge's agree across languages?"""
    check = _translation(request)
    if isinstance(check, HttpResponse):
        return check
    return render(request, "calibration/translation_equivalence.html",
                  {"check": check, "runs": judge_runs_finished_choices(limit=50)})


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def translation_equivalence_export(request: AuthedRequest) -> HttpResponse:
    """The check's rows as CSV: one row per facet × side (experts, judge, gap)."""
    check = _translation(request)
    if isinstance(check, HttpResponse):
        return check
    buffer = io.StringIO()
    writer = csv_dict_writer(buffer, TRANSLATION_FIELDS)
    writer.writeheader()
    for row in check.rows:
        for side in ("experts", "judge", "gap"):
            d = getattr(row, side)
            writer.writerow({"facet": row.facet, "value": row.value, "side": side,
                             **{k: "" if v is None else v for k, v in (("estimate", d.estimate), ("lower", d.lower),
                                                                       ("upper", d.upper))},
                             "n": d.n, "verdict": d.verdict, "words": d.words})
    response = HttpResponse(buffer.getvalue().encode(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="translation-equivalence.csv"'
    return response
