"""Adjudication pages: the adjudicator's queue, the decision page of one item, and a cycle's gold-label download."""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access.policy import Action, allowed, policy_required, require
from accounts.http import AuthedRequest, download_response
from annotations.forms import ReopenForm
from annotations.models import Panel
from annotations.selectors import assignment_with_panel, cycle_with_rubric
from annotations.views import reopen_from_post

from .exporting import GOLD_EXPORTERS, GoldLabelSet, gold_filename_stem
from .forms import DecisionForm, gold_field_name
from .selectors import (
    AdjudicationView,
    adjudication_queue_page,
    adjudication_state_for,
    adjudication_view,
    gold_labels,
)
from .services import adjudication_record


@never_cache
@login_required
@require_GET
def queue(request: AuthedRequest) -> HttpResponse:
    """Items of the adjudicator's panels whose experts disagree and that have no decision yet."""
    require(request.user, Action.ADJUDICATE)
    show_decided = request.GET.get("decided") == "1"
    found = adjudication_queue_page(user=request.user, include_decided=show_decided, page=request.GET.get("page", 1))
    return render(request, "calibration/adjudication/queue.html", {
        "entries": found.entries, "page_obj": found.page, "show_decided": show_decided,
        "page_query": "decided=1&" if show_decided else "",
    })


def _panel_of(public_id: str) -> Panel:
    found = assignment_with_panel(public_id=public_id)
    assert found is not None  # the page lists this expert's assignment
    return found.panel


def _render_item(request: AuthedRequest, *, view: AdjudicationView, form: DecisionForm, status: int = 200,
                 reopen_form: ReopenForm | None = None, reopen_id: str = "") -> HttpResponse:
    can_reopen_any = bool(view.experts) and allowed(
        request.user, Action.MANAGE_PANEL_WORK,
        _panel_of(view.experts[0].public_id))
    return render(request, "calibration/adjudication/item.html",
                  {"view": view, "form": form, "gold_rows": [(sub, field, [e.scores.get(sub.key) for e in view.experts])
                                for sub, field in form.rows(view.sub_dimensions)],
                   "can_reopen": can_reopen_any and not view.history,
                   "reopen_form": reopen_form, "reopen_id": reopen_id}, status=status)


def _decision_form(view: AdjudicationView, data: Any = None) -> DecisionForm:
    return DecisionForm(data, keys=[s.key for s in view.sub_dimensions],
                        initial={gold_field_name(k): v for k, v in view.current.items()})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def item(request: AuthedRequest, item_id: int) -> HttpResponse:
    """Every expert's scores and rationale (as Expert A, B, C), the item, and the gold-score form."""
    state = adjudication_state_for(user=request.user, item_id=item_id)
    view = adjudication_view(state=state)
    if request.method != "POST":
        return _render_item(request, view=view, form=_decision_form(view))
    form = _decision_form(view, request.POST)
    if form.is_valid():
        try:
            adjudication_record(item_id=item_id, adjudicator=request.user, scores=form.scores(),
                                reason=form.cleaned_data["reason"], note=form.cleaned_data["note"])
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, "Gold scores recorded. The experts' own scores are unchanged.")
            return redirect("calibration:adjudication_queue")
    return _render_item(request, view=view, form=form, status=400)


@never_cache
@login_required
@require_POST
def reopen(request: AuthedRequest, item_id: int, public_id: str) -> HttpResponse:
    """Send one expert's annotation back to them with a message (before any gold decision)."""
    state = adjudication_state_for(user=request.user, item_id=item_id)
    form = reopen_from_post(request, public_id=public_id, item_id=item_id,
                            success="Reopened; the expert will see your message in the item's history.")
    if form is not None:
        view = adjudication_view(state=state)
        return _render_item(request, view=view, form=_decision_form(view), status=400, reopen_form=form,
                            reopen_id=public_id)
    return redirect("calibration:adjudication_item", item_id=item_id)


@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def gold_export(request: AuthedRequest, pk: int) -> HttpResponse:
    """Download a cycle's current gold labels (?format=csv or json) for the benchmark pipeline."""
    cycle = cycle_with_rubric(pk=pk)
    exporter = GOLD_EXPORTERS.get(request.GET.get("format", "csv"), GOLD_EXPORTERS["csv"])
    labels = GoldLabelSet(cycle=cycle.name, rubric_version=cycle.rubric.version, rows=gold_labels(cycle=cycle))
    return download_response(exporter.render(labels), filename=exporter.filename(gold_filename_stem(cycle_id=cycle.pk)),
                             content_type=exporter.content_type)
