"""Pages of test-case review and the TheoBERT audit.

Experts: their review list, one case to review (blind: no other reviewer, count or answer; no assigned difficulty;
no model answer), one TheoBERT case to audit. Leads (of the panel) and admins: review cycles, their progress,
flags and agreement report, resolving a flag, a case's version history. A held-out case's text reaches only its
assigned reviewers and superusers (VIEW_HELD_OUT); a lead sees its id and the reviews, not its text.
"""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from access.policy import Action, allowed, panels_led, require
from accounts.http import AuthedRequest
from annotations.models import CaseFlag, CaseReview, CaseReviewCycle, Panel, TheoBertAudit
from annotations.rendering import markdown_to_safe_html as render_markdown
from annotations.review import (
    ReviewAnswers,
    case_flag_resolve,
    case_review_submit,
    flag_reason_texts,
    review_cycle_close,
    review_cycle_open,
    review_cycle_progress,
    reviews_for_expert,
)
from annotations.review import (
    case_history as case_history_read,
)
from evaluations.models import TestCase, TheoBertRun

from . import theobert as audit_service
from .difficulty import difficulty_fits, fit_abilities
from .forms import CaseReviewForm, FlagResolveForm, ReviewCycleForm, TheoBertAuditForm
from .report import review_report_latest, review_report_snapshot
from .tasks import audit_figures_update_later


def _errors(exc: ValidationError) -> str:
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
    return " ".join(exc.messages)


def _may_read_text(user: Any, case: TestCase) -> bool:
    return not case.is_held_out or allowed(user, Action.VIEW_HELD_OUT)


# --- experts -----------------------------------------------------------------------------------------------


@never_cache
@login_required
def queue(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.USE_ACCOUNT)
    reviews = list(reviews_for_expert(request.user))
    audits = list(TheoBertAudit.objects.filter(expert=request.user).select_related("result__case")
                  .order_by("submitted_at", "result__case__case_id"))
    return render(request, "review/queue.html", {
        "reviews": reviews, "audits": audits,
        "open_reviews": sum(not r.is_submitted for r in reviews), "open_audits": sum(a.submitted_at is None for a in audits),
    })


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def case(request: AuthedRequest, public_id: str) -> HttpResponse:
    """One case to review. Anyone but its reviewer gets 404 (the page must not confirm that the case exists)."""
    review = CaseReview.objects.select_related("cycle", "test_case", "test_case__tradition").filter(
        public_id=public_id).first()
    if review is None or not allowed(request.user, Action.REVIEW_CASE, review):
        raise Http404("No such review.")
    form = CaseReviewForm(request.POST or None)  # a submitted review is shown as text, not as a form
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            data = form.cleaned_data
            try:
                case_review_submit(review=review, user=request.user, answers=ReviewAnswers(
                    valid=data["valid"], reference_correct=data["reference_correct"], difficulty=data["difficulty"],
                    clarity=data["clarity"], comment=data["comment"]))
            except ValidationError as exc:
                messages.error(request, _errors(exc))
                status = 409
            else:
                messages.success(request, f"Your review of case {review.test_case.external_id} is saved.")
                following = reviews_for_expert(request.user).filter(submitted_at__isnull=True).first()
                return redirect("review:case", public_id=following.public_id) if following else redirect("review:queue")
    test_case = review.test_case
    # A revised case is reviewed as the version assigned; if it changed since, say so instead of showing new text.
    stale = test_case.version != review.case_version
    return render(request, "review/case.html", {
        "review": review, "case": test_case, "form": form, "stale": stale,
        "prompt_html": render_markdown(test_case.prompt), "reference_html": render_markdown(test_case.reference_answer),
    }, status=status)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def audit(request: AuthedRequest, public_id: str) -> HttpResponse:
    item = TheoBertAudit.objects.select_related("result", "result__case").filter(public_id=public_id).first()
    if item is None or not allowed(request.user, Action.REVIEW_CASE, item):
        raise Http404("No such audit.")
    form = TheoBertAuditForm(request.POST or None)
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            try:
                audit_service.audit_submit(audit=item, user=request.user, **form.cleaned_data)
                audit_figures_update_later(run_id=item.result.run_id)
            except ValidationError as exc:
                messages.error(request, _errors(exc))
                status = 409
            else:
                messages.success(request, f"Your audit of {item.result.case.case_id} is saved.")
                following = TheoBertAudit.objects.filter(expert=request.user, submitted_at__isnull=True).first()
                return redirect("review:audit", public_id=following.public_id) if following else redirect("review:queue")
    result = item.result
    return render(request, "review/audit.html", {"audit": item, "result": result, "case": result.case, "form": form,
                                                 "top": result.ranked[: max(result.k, 10)]}, status=status)


# --- leads -------------------------------------------------------------------------------------------------


def _panels_for(user: Any) -> Any:
    led = panels_led(user)
    panels = Panel.objects.select_related("tradition")
    return panels if led is None else panels.filter(pk__in=led)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def cycles(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.LEAD)
    panels = _panels_for(request.user)
    form = ReviewCycleForm(request.POST or None, panels=panels)
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            data = form.cleaned_data
            require(request.user, Action.MANAGE_PANEL_WORK, data["panel"])
            try:
                cycle_ = review_cycle_open(panel=data["panel"], name=data["name"] or "", user=request.user,
                                           reviewers=data["reviewers"], sample_size=data["sample_size"],
                                           seed=data["seed"] or 0)
            except ValidationError as exc:
                form.add_error(None, _errors(exc))
            else:
                messages.success(request, f"Review cycle “{cycle_.name}” opened: {cycle_.sample['size']} cases, "
                                          f"{cycle_.reviewers_per_case} reviewers each.")
                return redirect("review:cycle", pk=cycle_.pk)
    rows = (CaseReviewCycle.objects.filter(panel__in=panels).select_related("panel")
            # distinct: the join to flags repeats each review once per flag of the cycle
            .annotate(n_reviews=Count("reviews", distinct=True),
                      n_done=Count("reviews", filter=Q(reviews__submitted_at__isnull=False), distinct=True),
                      n_open_flags=Count("flags", filter=Q(flags__status=CaseFlag.Status.OPEN), distinct=True)))
    return render(request, "review/cycles.html", {"form": form, "cycles": rows}, status=status)


def _managed_cycle(request: AuthedRequest, pk: int) -> CaseReviewCycle:
    cycle_ = CaseReviewCycle.objects.select_related("panel", "panel__tradition").filter(pk=pk).first()
    if cycle_ is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, cycle_.panel):
        raise Http404("No such review cycle.")
    return cycle_


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def cycle(request: AuthedRequest, pk: int) -> HttpResponse:
    cycle_ = _managed_cycle(request, pk)
    if request.method == "POST" and request.POST.get("close"):
        review_cycle_close(cycle=cycle_, user=request.user)
        messages.success(request, "The review cycle is closed.")
        return redirect("review:cycle", pk=pk)
    flags = list(cycle_.flags.select_related("test_case").order_by("status", "test_case__external_id"))
    for flag in flags:
        flag.reason_text = flag_reason_texts(flag)  # type: ignore[attr-defined]
    report = review_report_latest(cycle=cycle_)
    return render(request, "review/cycle.html", {
        "cycle": cycle_, "progress": review_cycle_progress(cycle_), "flags": flags, "report": report,
        "payload": report.payload if report else None,
    })


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
    item = CaseFlag.objects.select_related("cycle__panel", "test_case").filter(pk=pk).first()
    if item is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, item.cycle.panel):
        raise Http404("No such flag.")
    test_case = item.test_case
    readable = _may_read_text(request.user, test_case)
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
                case_flag_resolve(flag=item, user=request.user, action=data["action"], note=data["note"],
                                  prompt=data["prompt"] if data["action"] == "revise" else None,
                                  reference_answer=data["reference_answer"] if data["action"] == "revise" else None,
                                  difficulty=data["difficulty"] or None)
            except ValidationError as exc:
                form.add_error(None, _errors(exc))
            else:
                item.refresh_from_db()
                messages.success(request, f"Flag on {test_case.external_id} resolved: {item.get_status_display().lower()}"
                                 + (f" (now version {item.new_version})." if item.new_version else "."))
                return redirect("review:cycle", pk=item.cycle_id)
    reviews = list(CaseReview.objects.filter(cycle=item.cycle, test_case=test_case, submitted_at__isnull=False)
                   .order_by("submitted_at"))
    return render(request, "review/flag.html", {
        "flag": item, "case": test_case, "readable": readable, "reviews": reviews, "form": form,
        "reason_text": flag_reason_texts(item),
    }, status=status)


@never_cache
@login_required
def case_history(request: AuthedRequest, pk: int) -> HttpResponse:
    require(request.user, Action.LEAD)
    test_case = get_object_or_404(TestCase.objects.select_related("tradition"), pk=pk)
    led = panels_led(request.user)
    if led is not None and not Panel.objects.filter(pk__in=led, tradition=test_case.tradition).exists():
        raise Http404("No such case.")
    return render(request, "review/history.html", {
        "case": test_case, "readable": _may_read_text(request.user, test_case), "history": case_history_read(test_case),
    })


# --- admins: the TheoBERT audit ----------------------------------------------------------------------------


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def theobert(request: AuthedRequest) -> HttpResponse:
    require(request.user, Action.MANAGE_CALIBRATION)
    runs = list(TheoBertRun.objects.filter(rescored_from__isnull=True)[:20])
    run = None
    if runs:
        chosen = request.GET.get("run") or request.POST.get("run")
        run = next((r for r in runs if str(r.pk) == chosen), runs[0])
    if request.method == "POST" and run is not None:
        if request.POST.get("assign"):
            panel = Panel.objects.filter(pk=request.POST.get("panel") or 0).first()
            if panel is None:
                messages.error(request, "Choose a panel whose experts audit the cases.")
            else:
                try:
                    n = audit_service.audits_assign(run=run, experts=list(panel.members.filter(is_active=True)),
                                                    per_case=int(request.POST.get("per_case") or 2))
                except (ValidationError, ValueError) as exc:
                    messages.error(request, _errors(exc) if isinstance(exc, ValidationError) else str(exc))
                else:
                    messages.success(request, f"{n} audits assigned to {panel.name}.")
        elif request.POST.get("rescore"):
            new = audit_service.rescore_without_rejected(run=run, user=request.user)
            messages.success(request, f"Re-scored without {len(new.excluded_cases)} rejected case(s): run #{new.pk}.")
        return redirect(f"{request.path}?run={run.pk}")
    context: dict[str, Any] = {"runs": runs, "run": run, "panels": Panel.objects.all()}
    if run is not None:
        rescored = run.rescorings.order_by("-created_at").first()
        # Stored figures (computed when the run was scored and when an audit was submitted), not bootstraps per view.
        context.update(agreement=audit_service.audit_figures_read(run), rescored=rescored,
                       rows=audit_service.side_by_side(run, rescored))
    return render(request, "review/theobert.html", context)


@never_cache
@login_required
def difficulty(request: AuthedRequest) -> HttpResponse:
    """Stored IRT fits: items against the assigned tiers, and model ability — on the equated scale, rotation named,
    when the fit was equated through anchor cases (manage.py irt_fit)."""
    require(request.user, Action.MANAGE_CALIBRATION)
    fits = list(difficulty_fits().defer("payload")[:50])
    chosen = request.GET.get("fit")
    fit = None
    if fits:
        wanted = next((f for f in fits if str(f.pk) == chosen), fits[0])
        fit = difficulty_fits().get(pk=wanted.pk)
    context: dict[str, Any] = {"fits": fits, "fit": fit}
    if fit is not None:
        context.update(payload=fit.document, equating=fit.document.get("equating"), models=fit_abilities(fit),
                       items=sorted(fit.document["items"], key=lambda i: -i["difficulty"]))
    return render(request, "review/difficulty.html", context)
