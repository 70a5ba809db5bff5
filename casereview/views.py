"""Pages of test-case review and the TheoBERT audit.

Experts: their review list, one case to review (blind: no other reviewer, count or answer; no assigned difficulty;
no model answer), one TheoBERT case to audit. Leads (of the panel) and admins: review cycles, their progress,
flags and agreement report, resolving a flag, a case's version history. A held-out case's text reaches only its
assigned reviewers and superusers (VIEW_HELD_OUT); a lead sees its id and the reviews, not its text. Each view reads
a form, asks `access.policy`, calls one service or selector and renders.
"""
from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from access.policy import Action, allowed, require
from accounts.http import AuthedRequest

from . import selectors, services
from . import theobert as audit_service
from .agreement import review_report_snapshot
from .forms import (
    CaseReviewForm,
    CycleCloseForm,
    FlagResolveForm,
    ReviewCycleForm,
    TheoBertAuditForm,
    TheoBertRunForm,
)
from .models import CaseReviewCycle
from .rules import ReviewAnswers, flag_reason_texts
from .tasks import audit_figures_update_later


def _errors(exc: ValidationError) -> str:
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
    return " ".join(exc.messages)


def _expert_form_response(request: AuthedRequest, form: forms.Form, *, submit: Callable[[], None],
                          saved: Callable[[], str], following: Callable[[], str | None], next_url: str,
                          again: Callable[[int], HttpResponse]) -> HttpResponse:
    """An expert's review or audit page: on a valid POST `submit` the answers, say so (`saved`) and go on to the
    expert's next open one (`next_url`), else the queue; a refused answer is 409 with the service's message, an
    invalid form 422, and the page (`again`) is shown with that status (a GET: 200)."""
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            try:
                submit()
            except ValidationError as exc:
                messages.error(request, _errors(exc))
                status = 409
            else:
                messages.success(request, saved())
                public_id = following()
                return redirect(next_url, public_id=public_id) if public_id else redirect("review:queue")
    return again(status)


# --- experts -----------------------------------------------------------------------------------------------


@never_cache
@login_required
def queue(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.USE_ACCOUNT)
    return render(request, "review/queue.html", {"queue": selectors.review_queue(request.user)})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def case(request: AuthedRequest, public_id: str) -> HttpResponse:
    """One case to review. Anyone but its reviewer gets 404 (the page must not confirm that the case exists)."""
    review = selectors.review_get(public_id)
    if review is None or not allowed(request.user, Action.REVIEW_CASE, review):
        raise Http404("No such review.")
    form = CaseReviewForm(request.POST or None)  # a submitted review is shown as text, not as a form

    def submit() -> None:
        data = form.cleaned_data
        services.case_review_submit(review=review, user=request.user, answers=ReviewAnswers(
            valid=data["valid"], reference_correct=data["reference_correct"], difficulty=data["difficulty"],
            clarity=data["clarity"], comment=data["comment"]))

    # A revised case is reviewed as the version assigned; if it changed since, the page says so instead of new text.
    return _expert_form_response(
        request, form, submit=submit,
        saved=lambda: f"Your review of case {review.test_case.external_id} is saved.",
        following=lambda: selectors.review_next_open(request.user), next_url="review:case",
        again=lambda status: render(request, "review/case.html", {"page": selectors.review_page(review), "form": form},
                                    status=status))


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def audit(request: AuthedRequest, public_id: str) -> HttpResponse:
    item = selectors.audit_get(public_id)
    if item is None or not allowed(request.user, Action.REVIEW_CASE, item):
        raise Http404("No such audit.")
    form = TheoBertAuditForm(request.POST or None)

    def submit() -> None:
        services.audit_submit(audit=item, user=request.user, **form.cleaned_data)
        audit_figures_update_later(run_id=item.result.run_id)

    return _expert_form_response(
        request, form, submit=submit, saved=lambda: f"Your audit of {item.result.case.case_id} is saved.",
        following=lambda: selectors.audit_next_open(request.user), next_url="review:audit",
        again=lambda status: render(request, "review/audit.html", {"page": selectors.audit_page(item), "form": form},
                                    status=status))


# --- leads -------------------------------------------------------------------------------------------------


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def cycles(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.LEAD)
    form = ReviewCycleForm(request.POST or None, panels=selectors.panels_for(request.user))
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            data = form.cleaned_data
            require(request.user, Action.MANAGE_PANEL_WORK, data["panel"])
            try:
                cycle_ = services.review_cycle_open(panel=data["panel"], name=data["name"] or "", user=request.user,
                                                    reviewers=data["reviewers"], sample_size=data["sample_size"],
                                                    seed=data["seed"] or 0)
            except ValidationError as exc:
                form.add_error(None, _errors(exc))
            else:
                messages.success(request, f"Review cycle “{cycle_.name}” opened: {cycle_.sample['size']} cases, "
                                          f"{cycle_.reviewers_per_case} reviewers each.")
                return redirect("review:cycle", pk=cycle_.pk)
    return render(request, "review/cycles.html", {"form": form, "cycles": selectors.review_cycles_for(request.user)},
                  status=status)


def _managed_cycle(request: AuthedRequest, pk: int) -> CaseReviewCycle:
    cycle_ = selectors.review_cycle_get(pk)
    if cycle_ is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, cycle_.panel):
        raise Http404("No such review cycle.")
    return cycle_


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def cycle(request: AuthedRequest, pk: int) -> HttpResponse:
    cycle_ = _managed_cycle(request, pk)
    if request.method == "POST" and CycleCloseForm(request.POST).is_valid():
        services.review_cycle_close(cycle=cycle_, user=request.user)
        messages.success(request, "The review cycle is closed.")
        return redirect("review:cycle", pk=pk)
    # The agreement figures are the stored report's (computed on the lead's POST), never a bootstrap per view.
    return render(request, "review/cycle.html", {"cycle": cycle_, "page": selectors.review_cycle_page(cycle_)})


@login_required
@require_POST
def cycle_report(request: AuthedRequest, pk: int) -> HttpResponse:
    cycle_ = _managed_cycle(request, pk)
    report = review_report_snapshot(cycle=cycle_, user=request.user)
    messages.success(request, f"Agreement report version {report.version} computed.")
    return redirect("review:cycle", pk=pk)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def flag(request: AuthedRequest, pk: int) -> HttpResponse:
    item = selectors.flag_get(pk)
    if item is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, item.cycle.panel):
        raise Http404("No such flag.")
    test_case = item.test_case
    readable = allowed(request.user, Action.READ_CASE_TEXT, test_case)
    form = FlagResolveForm(request.POST or None, initial={
        "prompt": test_case.prompt if readable else "", "reference_answer": test_case.reference_answer if readable else "",
        "difficulty": test_case.difficulty})
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            data = form.cleaned_data
            if data["action"] == "revise" and not readable:
                raise Http404("No such flag.")
            try:
                resolved = services.case_flag_resolve(
                    flag=item, user=request.user, action=data["action"], note=data["note"],
                    prompt=data["prompt"] if data["action"] == "revise" else None,
                    reference_answer=data["reference_answer"] if data["action"] == "revise" else None,
                    difficulty=data["difficulty"] or None)
            except ValidationError as exc:
                form.add_error(None, _errors(exc))
            else:
                messages.success(request, f"Flag on {test_case.external_id} resolved: "
                                 f"{resolved.get_status_display().lower()}"
                                 + (f" (now version {resolved.new_version})." if resolved.new_version else "."))
                return redirect("review:cycle", pk=resolved.cycle_id)
    return render(request, "review/flag.html", {
        "flag": item, "case": test_case, "readable": readable, "reviews": selectors.flag_reviews(item), "form": form,
        "reason_text": flag_reason_texts(item.reasons),
    }, status=status)


@never_cache
@login_required
def case_history(request: AuthedRequest, pk: int) -> HttpResponse:
    require(request.user, Action.VIEW_CASE_HISTORY)
    test_case = selectors.case_get(pk)
    if test_case is None or not allowed(request.user, Action.VIEW_CASE_HISTORY, test_case):
        raise Http404("No such case.")
    return render(request, "review/history.html", {
        "case": test_case, "readable": allowed(request.user, Action.READ_CASE_TEXT, test_case),
        "history": selectors.case_history(test_case),
    })


# --- admins: the TheoBERT audit ----------------------------------------------------------------------------


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def theobert(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.MANAGE_CALIBRATION)
    if request.method == "POST":
        form = TheoBertRunForm(request.POST)
        valid = form.is_valid()
        run = selectors.theobert_run_chosen(request.GET.get("run") or form.cleaned_data.get("run"))
        if run is not None:
            if not valid:
                messages.error(request, "Choose a panel whose experts audit the cases." if "panel" in form.errors
                               else "The number of experts per case must be a whole number.")
            elif form.cleaned_data["assign"]:
                panel = form.cleaned_data["panel"]
                if panel is None:
                    messages.error(request, "Choose a panel whose experts audit the cases.")
                else:
                    try:
                        n = services.audits_assign_to_panel(run=run, panel=panel,
                                                            per_case=form.cleaned_data["per_case"] or 2)
                    except ValidationError as exc:
                        messages.error(request, _errors(exc))
                    else:
                        messages.success(request, f"{n} audits assigned to {panel.name}.")
            elif form.cleaned_data["rescore"]:
                new = audit_service.rescore_without_rejected(run=run, user=request.user)
                messages.success(request, f"Re-scored without {len(new.excluded_cases)} rejected case(s): run #{new.pk}.")
            return redirect(f"{request.path}?run={run.pk}")
    # Stored figures (computed when the run was scored and when an audit was submitted), not bootstraps per view.
    return render(request, "review/theobert.html", {"page": selectors.theobert_page(request.GET.get("run"))})


@never_cache
@login_required
def difficulty(request: AuthedRequest) -> HttpResponse:
    """Stored IRT fits: items against the assigned tiers, and model ability — on the equated scale, rotation named,
    when the fit was equated through anchor cases (manage.py irt_fit)."""
    require(request.user, Action.MANAGE_CALIBRATION)
    return render(request, "review/difficulty.html", {"page": selectors.difficulty_page(request.GET.get("fit"))})
