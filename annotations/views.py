"""Scoring pages: the expert's queue and the blind scoring page (full page, or an htmx partial).

Every response is `never_cache` (private, no-store): item pages may carry held-out case text.

Views parse, call one service or selector, render. They never hand ORM objects to templates: the
selectors build blinded dataclasses (see annotations/selectors.py).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from access.policy import Action, allowed, require
from access.web import query_page
from accounts.http import AuthedRequest

from .forms import HeartbeatForm, ReopenForm, ScoringForm, SkipForm
from .lifecycle import REFUSAL_CODES
from .models import Assignment
from .receipts import IDEMPOTENCY_FIELD
from .retests import retests_serve
from .selectors import (
    QUEUE_PAGE_SIZE,
    assignment_for_expert,
    assignment_next_open,
    assignment_with_panel,
    expert_progress,
    expert_queue_page,
    item_view,
    lead_reopenable_page,
    sub_dimensions_for,
)
from .services import (
    annotation_can_undo,
    annotation_draft_save,
    annotation_reopen,
    annotation_skip,
    annotation_submit,
    annotation_time_add,
    annotation_undo,
    undo_window_seconds,
)

ITEM_TEMPLATE = "annotations/item.html"


def epoch_ms(moment: datetime) -> int:
    """Milliseconds since the epoch, as JavaScript's Date counts them."""
    return int(moment.timestamp() * 1000)


def _page(request: AuthedRequest) -> int:
    page = query_page(request.GET.get("page"))
    if page is None:
        raise Http404("no such page")
    return page


def _seconds(request: AuthedRequest) -> int:
    """Active seconds sent with any request of the page; an invalid or missing value counts nothing."""
    form = HeartbeatForm(request.POST)
    return int(form.cleaned_data["seconds"] or 0) if form.is_valid() else 0


def _record_seconds(request: AuthedRequest, assignment: Assignment) -> None:
    """For requests whose service does not take the seconds itself (heartbeats, refused forms)."""
    seconds = _seconds(request)
    if seconds:
        annotation_time_add(assignment=assignment, seconds=seconds)


# Refusals of the request itself (its idempotency key), answered 422 like a form error: nothing was written.
KEY_CODES = frozenset({"invalid_idempotency_key", "idempotency_key_reused"})


def _idempotency_key(request: AuthedRequest) -> str:
    """The write attempt's key: the Idempotency-Key header, else the form field (a beacon cannot set headers)."""
    return request.headers.get("Idempotency-Key") or request.POST.get(IDEMPOTENCY_FIELD, "")


def _render_item(
    request: AuthedRequest, assignment: Assignment, *, status: int = 200, message: str = "",
    form: ScoringForm | None = None, undo_id: str = "", **view_kwargs: Any,
) -> HttpResponse:
    item = item_view(assignment=assignment, **view_kwargs)
    if form is None:
        form = ScoringForm(sub_dimensions=item.sub_dimensions)
    context = {
        "item": item,
        "form": form,
        "score_rows": form.score_rows(item.sub_dimensions),
        "progress": expert_progress(expert=request.user),
        "message": message,
        "undo_id": undo_id,  # the item just finished, offered back with an "Undo" button
        "can_undo": item.is_locked and annotation_can_undo(assignment=assignment, actor=request.user),
        "undo_minutes": max(1, undo_window_seconds() // 60),
        # For the page's choice between its server copy and entries kept in the browser (static/js/scoring.js).
        "server_now_ms": epoch_ms(timezone.now()),
        "saved_at_ms": epoch_ms(item.saved_at) if item.saved_at else 0,
    }
    template = f"{ITEM_TEMPLATE}#scoring" if request.htmx else ITEM_TEMPLATE
    return render(request, template, context, status=status)


def _refused(request: AuthedRequest, assignment: Assignment, exc: ValidationError) -> HttpResponse:
    """409: the item can no longer be scored (closed cycle, withdrawn, …); the page comes back read-only, saying why."""
    assignment.refresh_from_db(fields=["status", "withdrawn_reason"])
    response = _render_item(request, assignment, status=409, message=" ".join(exc.messages))
    if request.htmx:  # autosave targets the save-status line: replace the whole scoring section instead
        reswap(retarget(response, "#scoring"), "outerHTML")
    return response


def _after_finish(request: AuthedRequest, message: str, *, finished_id: str) -> HttpResponse:
    """Go on to the next unfinished item (htmx: render it in place and put its URL in the address bar), offering "Undo"."""
    next_id = assignment_next_open(expert=request.user)
    if not request.htmx:
        messages.success(request, message)
        if next_id:
            return redirect("annotations:item", public_id=next_id)
        return redirect("annotations:queue")
    if next_id is None:
        response = render(request, "annotations/queue.html#all-done",
                          {"progress": expert_progress(expert=request.user), "message": message,
                           "undo_id": finished_id, "undo_minutes": max(1, undo_window_seconds() // 60)})
        response["HX-Replace-Url"] = reverse("annotations:queue")
        return response
    assignment = assignment_for_expert(expert=request.user, public_id=next_id)
    response = _render_item(request, assignment, message=message, undo_id=finished_id)
    response["HX-Replace-Url"] = reverse("annotations:item", kwargs={"public_id": next_id})
    return response


@never_cache
@login_required
@require_GET
def queue(request: AuthedRequest) -> HttpResponse:
    """The expert's own queue: progress, a resume button, one page of items in their order."""
    retests_serve(expert_id=request.user.pk)  # re-served items now due join the queue, unmarked
    page = _page(request)
    progress = expert_progress(expert=request.user)
    pages = max(1, -(-progress.total // QUEUE_PAGE_SIZE))
    context = {
        "progress": progress,
        "rows": expert_queue_page(expert=request.user, page=page),
        "resume_id": assignment_next_open(expert=request.user),
        "page": page,
        "pages": pages,
    }
    return render(request, "annotations/queue.html", context)


@never_cache
@login_required
@require_GET
def next_item(request: AuthedRequest) -> HttpResponse:
    """Resume where the expert left off."""
    retests_serve(expert_id=request.user.pk)
    next_id = assignment_next_open(expert=request.user)
    if next_id is None:
        return redirect("annotations:queue")
    return redirect("annotations:item", public_id=next_id)


@never_cache
@login_required
@require_GET
def item(request: AuthedRequest, public_id: str) -> HttpResponse:
    """The blind scoring page for one of the expert's own assignments (404 for anyone else's)."""
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    return _render_item(request, assignment)


def _scoring_form(request: AuthedRequest, assignment: Assignment, *, complete: bool = False) -> ScoringForm:
    return ScoringForm(request.POST, sub_dimensions=sub_dimensions_for(assignment=assignment), complete=complete)


@never_cache
@login_required
@require_POST
def draft(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Autosave (htmx, on every change): returns the save-status fragment (422 with the form's errors)."""
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    form = _scoring_form(request, assignment)
    status = 422
    if not form.is_valid():
        if not form.unknown_fields:  # a request naming sub-dimensions the item does not have changes nothing
            _record_seconds(request, assignment)
    else:
        try:
            annotation = annotation_draft_save(assignment=assignment, actor=request.user, data=form.annotation_input(),
                                               seconds=_seconds(request), idempotency_key=_idempotency_key(request))
        except ValidationError as exc:
            if getattr(exc, "code", None) in REFUSAL_CODES:
                return _refused(request, assignment, exc)
            form.add_service_error(exc)
            status = 409 if getattr(exc, "code", None) == "already_submitted" else 422
        else:
            # A retried autosave (same idempotency key) is told the save time of the write it repeats.
            return render(request, f"{ITEM_TEMPLATE}#save-status",
                          {"saved_at": timezone.now(), "saved_at_ms": epoch_ms(annotation.updated_at)})
    return render(request, f"{ITEM_TEMPLATE}#save-status", {"error": form.error_text()}, status=status)


@never_cache
@login_required
@require_POST
def heartbeat(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Active seconds reported by the page; capped per heartbeat by the service."""
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    _record_seconds(request, assignment)
    return HttpResponse(status=204)


@never_cache
@login_required
@require_POST
def submit(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Submit and lock; when the form is not valid the page comes back with its errors (422)."""
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    form = _scoring_form(request, assignment, complete=True)
    if not form.is_valid():
        if not form.unknown_fields:  # as for drafts: a request naming sub-dimensions the item lacks changes nothing
            _record_seconds(request, assignment)
    else:
        try:
            annotation_submit(assignment=assignment, actor=request.user, data=form.annotation_input(),
                              seconds=_seconds(request), idempotency_key=_idempotency_key(request))
        except ValidationError as exc:
            if getattr(exc, "code", None) in REFUSAL_CODES:
                return _refused(request, assignment, exc)
            if getattr(exc, "code", None) in ("already_submitted", "conflict"):
                assignment.refresh_from_db(fields=["status"])
                return _render_item(request, assignment, status=409, message=" ".join(exc.messages))
            form.add_service_error(exc)
        else:
            return _after_finish(request, "Submitted.", finished_id=assignment.public_id)
    assignment.refresh_from_db(fields=["status"])
    return _render_item(request, assignment, status=422, form=form, overrides=form.entered())


@never_cache
@login_required
@require_POST
def skip(request: AuthedRequest, public_id: str) -> HttpResponse:
    """"Outside my expertise": finish without scoring."""
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    form = SkipForm(request.POST)
    if not form.is_valid():
        _record_seconds(request, assignment)
        scoring = _scoring_form(request, assignment)
        scoring.is_valid()
        return _render_item(request, assignment, status=422, form=scoring, overrides=scoring.entered())
    try:
        annotation_skip(assignment=assignment, actor=request.user, seconds=_seconds(request),
                        idempotency_key=_idempotency_key(request), **form.cleaned_data)
    except ValidationError as exc:
        if getattr(exc, "code", None) in REFUSAL_CODES:
            return _refused(request, assignment, exc)
        assignment.refresh_from_db(fields=["status"])
        status = 422 if getattr(exc, "code", None) in KEY_CODES else 409
        return _render_item(request, assignment, status=status, message=" ".join(exc.messages))
    return _after_finish(request, "Skipped as outside your expertise.", finished_id=assignment.public_id)


@never_cache
@login_required
@require_POST
def undo(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Take back one's own submission or skip within the undo window: the item comes back as a draft.

    After the window (or once the expert has moved on) the service refuses: 409 with the item, locked, saying so.
    """
    assignment = assignment_for_expert(expert=request.user, public_id=public_id)
    try:
        annotation_undo(assignment=assignment, actor=request.user, idempotency_key=_idempotency_key(request))
    except ValidationError as exc:
        if getattr(exc, "code", None) in REFUSAL_CODES:
            return _refused(request, assignment, exc)
        assignment.refresh_from_db(fields=["status"])
        status = 422 if getattr(exc, "code", None) in KEY_CODES else 409
        response = _render_item(request, assignment, status=status, message=" ".join(exc.messages))
    else:
        if not request.htmx:
            messages.success(request, "Taken back: the item is a draft again.")
            return redirect("annotations:item", public_id=public_id)
        assignment.refresh_from_db(fields=["status"])
        response = _render_item(request, assignment, message="Taken back: the item is a draft again.")
    if request.htmx:
        response["HX-Replace-Url"] = reverse("annotations:item", kwargs={"public_id": public_id})
    return response


def _render_lead(request: AuthedRequest, *, reopen_form: ReopenForm | None = None, reopen_id: str = "",
                 status: int = 200) -> HttpResponse:
    page = _page(request)
    return render(request, "annotations/lead.html", {
        "rows": lead_reopenable_page(user=request.user, page=page), "page": page,
        "reopen_form": reopen_form, "reopen_id": reopen_id,
    }, status=status)


@never_cache
@login_required
@require_GET
def lead(request: AuthedRequest) -> HttpResponse:
    """Panel leads: the finished annotations of their panels, each with a "Reopen" button."""
    require(request.user, Action.LEAD)
    return _render_lead(request)


def reopen_from_post(
    request: AuthedRequest, *, public_id: str, success: str, item_id: int | None = None
) -> ReopenForm | None:
    """Reopen the posted assignment (its panel's lead or an admin; anyone else gets 404), reporting by message.

    Returns the bound form when it is not valid (nothing was reopened), for the caller to show its errors.
    """
    assignment = assignment_with_panel(public_id=public_id, item_id=item_id)
    if assignment is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, assignment.panel):
        raise Http404("No such assignment.")
    form = ReopenForm(request.POST)
    if not form.is_valid():
        return form
    try:
        annotation_reopen(assignment=assignment, actor=request.user, note=form.cleaned_data["note"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, success)
    return None


@never_cache
@login_required
@require_POST
def reopen(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Unlock a finished annotation from the panel lead's list (the list again, with the error, if the note is not valid)."""
    form = reopen_from_post(request, public_id=public_id,
                            success=f"Reopened {public_id}; the expert can change it now.")
    if form is not None:
        return _render_lead(request, reopen_form=form, reopen_id=public_id, status=400)
    return redirect("annotations:lead")
