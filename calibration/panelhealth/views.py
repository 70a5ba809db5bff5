"""Thin views: the policy, one selector, a render. Leads see their own panels; experts only their own feedback."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from access.policy import Action, allowed, panels_led, policy_required
from accounts.http import AuthedRequest

from . import selectors


@never_cache
@require_GET
@policy_required(Action.LEAD)
def index(request: AuthedRequest) -> HttpResponse:
    """The panels whose health the user may read: the ones they lead (admins: every panel)."""
    return render(request, "calibration/panelhealth/index.html",
                  {"panels": selectors.panels_readable(led=panels_led(request.user))})


def _health(request: AuthedRequest, panel_id: int) -> selectors.PanelHealth:
    panel_ = selectors.panel_get(panel_id)
    if panel_ is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, panel_):
        raise Http404("No such panel.")
    cycle = None
    raw = request.GET.get("cycle", "")
    notes = []
    if raw:
        cycle = selectors.panel_cycle_get(panel=panel_, raw=raw)
        if cycle is None:
            notes.append(f"“{raw[:40]}” is not a cycle of this panel: showing all its cycles.")
    health = selectors.panel_health(panel=panel_, cycle=cycle)
    health.notes[:0] = notes
    return health


@never_cache
@login_required
@require_GET
def panel(request: AuthedRequest, panel_id: int) -> HttpResponse:
    """One panel's health (404 unless its lead or an admin: the page does not confirm the panel exists)."""
    return render(request, "calibration/panelhealth/panel.html", {"health": _health(request, panel_id)})


@never_cache
@login_required
@require_GET
def export(request: AuthedRequest, panel_id: int) -> HttpResponse:
    """The same table as CSV (same rule as the page)."""
    health = _health(request, panel_id)
    response = HttpResponse(selectors.panel_health_csv(health), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="panel-health-{panel_id}.csv"'
    return response


@never_cache
@require_GET
@policy_required(Action.USE_ACCOUNT)
def mine(request: AuthedRequest) -> HttpResponse:
    """The signed-in expert's own feedback, closed cycles only."""
    return render(request, "calibration/panelhealth/mine.html",
                  {"feedback": selectors.my_calibration(expert=request.user)})
