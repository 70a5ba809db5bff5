"""Delphi pages: the study list, creating a study, the study page, the expert's allocation form, admin actions.

Every view first resolves the study through `selectors.study_for` (404 unless staff or a panelist), then
checks the action (`access.policy`, RUN_DELPHI: 403). Responses are `never_cache`: expert pages
carry their own allocations. Expert pages get plain dataclasses without other people's identities.
"""
from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access.policy import Action, allowed, policy_required, require
from accounts.http import AuthedRequest, download_response

from .exporting import JSON_CONTENT_TYPE, study_report_filename, study_report_json
from .forms import AllocationForm, ApproveForm, StudyCreateForm
from .models import DelphiStudy
from .report import delphi_report_build
from .selectors import (
    allocation_prefill,
    expert_rounds,
    is_panelist,
    panelist_status,
    proposal_levels,
    round_last_closed,
    round_open,
    rounds_closed,
    study_for,
    study_list,
    study_warnings,
    weight_structure,
)
from .services import (
    delphi_proposal_approve,
    delphi_rescoring_refresh,
    delphi_response_submit,
    delphi_round_close,
    delphi_study_close,
    delphi_study_create,
    proposal_rescoring,
)

STUDIES_PAGE_SIZE = 50


def _validation_messages(exc: ValidationError) -> list[str]:
    if hasattr(exc, "error_dict"):
        return [m for messages_ in exc.message_dict.values() for m in messages_]
    return list(exc.messages)


@never_cache
@login_required
@require_GET
def index(request: AuthedRequest) -> HttpResponse:
    """The studies the user may see (all for staff, their own for panelists), a page at a time."""
    page = Paginator(study_list(user=request.user), STUDIES_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "delphi/index.html",
                  {"rows": page.object_list, "page_obj": page, "is_admin": allowed(request.user, Action.RUN_DELPHI)})


@never_cache
@policy_required(Action.RUN_DELPHI)
@require_http_methods(["GET", "POST"])
def create(request: AuthedRequest) -> HttpResponse:
    """Create a study: rubric, tradition, panel and/or experts, planned rounds, convergence threshold."""
    form = StudyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = delphi_study_create(
                name=data["name"], rubric=data["rubric"], tradition=data["tradition"], panel=data["panel"],
                panelists=data["panelists"], planned_rounds=data["planned_rounds"],
                convergence_threshold=data["convergence_threshold"], created_by=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, gettext("“%(study)s” created; round 1 is open.") % {"study": result.study})
            for warning in result.warnings:
                messages.warning(request, warning)
            return redirect("delphi:study", pk=result.study.pk)
    return render(request, "delphi/create.html", {"form": form},
                  status=422 if request.method == "POST" else 200)


@never_cache
@login_required
@require_GET
def study(request: AuthedRequest, pk: int) -> HttpResponse:
    """The study: for staff its rounds, statistics, panelists' status and proposal; for a panelist their own view."""
    obj = study_for(user=request.user, pk=pk)
    if allowed(request.user, Action.RUN_DELPHI):
        return _render_study_admin(request, obj, approve_form=ApproveForm())
    structure = weight_structure(rubric=obj.rubric)
    return render(request, "delphi/study_expert.html", {
        "study": obj, "open_round": round_open(study=obj), "structure": structure,
        "rounds": expert_rounds(study=obj, expert=request.user, structure=structure),
        "n_panelists": obj.panelists.count(),
    })


def _render_study_admin(request: AuthedRequest, obj: DelphiStudy, *, approve_form: ApproveForm,
                        status: int = 200) -> HttpResponse:
    """The staff's study page: rounds, statistics, panelists' status, the proposal and the approval form."""
    structure = weight_structure(rubric=obj.rubric)
    current = round_open(study=obj)
    rescoring = obj.rescoring if obj.status == obj.Status.APPROVED else (
        proposal_rescoring(study=obj) if obj.status == obj.Status.PROPOSED else None)
    return render(request, "delphi/study_admin.html", {
        "study": obj, "open_round": current, "structure": structure,
        "warnings": study_warnings(study=obj),
        "rounds": rounds_closed(study=obj, structure=structure),
        "panelists": panelist_status(study=obj, round=current or round_last_closed(study=obj)),
        "status_round": current or round_last_closed(study=obj),
        "proposal_levels": proposal_levels(proposal=obj.proposal, structure=structure) if obj.proposal else [],
        "rescoring": rescoring, "approve_form": approve_form,
        "dimension_names": {d.key: d.name for d in structure.dimensions},
    }, status=status)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def respond(request: AuthedRequest, pk: int) -> HttpResponse:
    """The allocation form of the open round: 100 points per level, feedback from the previous round."""
    obj = study_for(user=request.user, pk=pk)
    panelist = is_panelist(study=obj, user=request.user)
    if request.method == "POST" and not panelist:
        raise PermissionDenied("Only panelists submit allocations.")
    current = round_open(study=obj)
    structure = weight_structure(rubric=obj.rubric)
    context: dict[str, object] = {"study": obj, "round": current, "panelist": panelist, "structure": structure}
    if current is None:
        return render(request, "delphi/respond.html", context, status=409 if request.method == "POST" else 200)
    form = AllocationForm(request.POST, structure=structure) if request.method == "POST" else None
    if form is not None and form.is_valid():
        try:
            delphi_response_submit(round=current, expert=request.user, allocation=form.allocation())
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, gettext("Your round %(number)s weights are saved. You can change them until "
                                              "the round closes.") % {"number": current.number})
            return redirect("delphi:study", pk=obj.pk)
    prefill = allocation_prefill(study=obj, round=current, expert=request.user, structure=structure)
    if form is None:
        form = AllocationForm(initial=prefill.initial, structure=structure)
    context.update(
        form=form,
        groups=form.groups(prefill.feedback),
        answered=current.responses.filter(expert=request.user).values_list("updated_at", flat=True).first(),
    )
    return render(request, "delphi/respond.html", context, status=422 if form.errors else 200)


def _staff_action(
    request: AuthedRequest, pk: int, action: Callable[[DelphiStudy], list[tuple[int, str]]]
) -> HttpResponse:
    """Run a staff action on a study; its (level, text) messages, or its validation errors, go to the study page."""
    obj = study_for(user=request.user, pk=pk)
    require(request.user, Action.RUN_DELPHI)
    try:
        notes = action(obj)
    except ValidationError as exc:
        for message in _validation_messages(exc):
            messages.error(request, message)
    else:
        for level, text in notes:
            messages.add_message(request, level, text)
    return redirect("delphi:study", pk=obj.pk)


@never_cache
@login_required
@require_POST
def round_close(request: AuthedRequest, pk: int, number: int) -> HttpResponse:
    """Close the open round (staff): statistics, convergence, attrition; opens the next round when due."""

    def close(obj: DelphiStudy) -> list[tuple[int, str]]:
        target = obj.rounds.filter(number=number).first()
        if target is None:
            return [(messages.ERROR, f"There is no round {number}.")]
        result = delphi_round_close(round=target, actor=request.user)
        return [(messages.SUCCESS, message) for message in result.messages]

    return _staff_action(request, pk, close)


@never_cache
@login_required
@require_POST
def study_close(request: AuthedRequest, pk: int) -> HttpResponse:
    """Close the study (staff): propose weights from the last round's medians, renormalised."""

    def close(obj: DelphiStudy) -> list[tuple[int, str]]:
        delphi_study_close(study=obj, actor=request.user)
        return [(messages.SUCCESS, gettext("The study is closed. Review the proposed weights and approve them."))]

    return _staff_action(request, pk, close)


@never_cache
@login_required
@require_POST
def approve(request: AuthedRequest, pk: int) -> HttpResponse:
    """Approve the proposal (staff): create the draft rubric version and the re-scoring report.

    A version name that is not valid (too long, taken) comes back on the study page next to its field.
    """
    obj = study_for(user=request.user, pk=pk)
    require(request.user, Action.RUN_DELPHI)
    form = ApproveForm(request.POST)
    if form.is_valid():
        try:
            obj = delphi_proposal_approve(study=obj, actor=request.user, version=form.cleaned_data["version"])
        except ValidationError as exc:
            form.add_service_error(exc)
            if "version" not in form.errors:  # not about the name: the study's state refused it
                for message in _validation_messages(exc):
                    messages.error(request, message)
                return redirect("delphi:study", pk=obj.pk)
        else:
            version = obj.proposed_rubric.version if obj.proposed_rubric else ""
            messages.success(request, gettext("Rubric v%(version)s created as a draft.") % {"version": version})
            if not obj.rescoring.get("available"):
                messages.warning(request, obj.rescoring.get("reason", "No re-scoring."))
            return redirect("delphi:study", pk=obj.pk)
    return _render_study_admin(request, obj, approve_form=form, status=422)


@never_cache
@login_required
@require_POST
def rescore(request: AuthedRequest, pk: int) -> HttpResponse:
    """Recompute the re-scoring report of an approved study (staff), e.g. after a judge run."""

    def refresh(obj: DelphiStudy) -> list[tuple[int, str]]:
        delphi_rescoring_refresh(study=obj)
        return [(messages.SUCCESS, "Re-scoring recomputed.")]

    return _staff_action(request, pk, refresh)


@never_cache
@login_required
@require_GET
def report_json(request: AuthedRequest, pk: int) -> HttpResponse:
    """The whole study as JSON (staff): settings, warnings, round statistics, named allocations, proposal, re-scoring."""
    obj = study_for(user=request.user, pk=pk)
    require(request.user, Action.RUN_DELPHI)
    return download_response(study_report_json(delphi_report_build(study=obj)),
                             filename=study_report_filename(study_id=obj.pk), content_type=JSON_CONTENT_TYPE)
