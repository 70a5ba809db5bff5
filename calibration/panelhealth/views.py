"""Thin views: the policy, one selector, a render. Leads see their own panels; experts only their own feedback."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from access.policy import Action, allowed, panels_led, policy_required
from accounts.http import AuthedRequest
from annotations.models import CalibrationCycle, Panel

from . import selectors


@never_cache
@require_GET
@policy_required(Action.LEAD)
def index(request: AuthedRequest) -> HttpResponse:
    """The panels whose health the user may read: the ones they lead (admins: every panel)."""
    led = panels_led(request.user)
    panels = Panel.objects.order_by("name") if led is None else Panel.objects.filter(pk__in=led).order_by("name")
    return render(request, "calibration/panelhealth/index.html", {"panels": list(panels)})


@never_cache
@login_required
@require_GET
def panel(request: AuthedRequest, panel_id: int) -> HttpResponse:
    """One panel's health (404 unless its lead or an admin: the page does not confirm the panel exists)."""
    panel_ = Panel.objects.filter(pk=panel_id).first()
    if panel_ is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, panel_):
        raise Http404("No such panel.")
    cycle = None
    raw = request.GET.get("cycle", "")
    notes = []
    if raw:
        cycle = CalibrationCycle.objects.filter(pk=int(raw), assignments__panel=panel_).first() if raw.isdigit() else None
        if cycle is None:
            notes.append(f"“{raw[:40]}” is not a cycle of this panel: showing all its cycles.")
    health = selectors.panel_health(panel=panel_, cycle=cycle)
    health.notes[:0] = notes
    return render(request, "calibration/panelhealth/panel.html", {"health": health})


@never_cache
@require_GET
@policy_required(Action.USE_ACCOUNT)
def mine(request: AuthedRequest) -> HttpResponse:
    """The signed-in expert's own feedback, closed cycles only."""
    return render(request, "calibration/panelhealth/mine.html",
                  {"feedback": selectors.my_calibration(expert=request.user)})
