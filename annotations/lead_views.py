"""Panel lead pages of the lifecycle: open and withdrawn assignments, and handing one to another member.

The rule lives in `annotations.lifecycle.assignment_reassign`; these views parse, call it and render.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from access.policy import Action, allowed, require
from access.web import query_page
from accounts.http import AuthedRequest

from .forms import ReassignForm
from .lifecycle import assignment_reassign, reassign_candidates
from .models import Assignment
from .selectors import lead_reassignable_page


def _page(request: AuthedRequest) -> int:
    page = query_page(request.GET.get("page"))
    if page is None:
        raise Http404("no such page")
    return page


@never_cache
@login_required
@require_GET
def assignments(request: AuthedRequest) -> HttpResponse:
    """Open and withdrawn assignments of the lead's panels (staff: all), each with a "Reassign" link."""
    require(request.user, Action.LEAD)
    page = _page(request)
    return render(request, "annotations/lead_assignments.html",
                  {"rows": lead_reassignable_page(user=request.user, page=page), "page": page})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def reassign(request: AuthedRequest, public_id: str) -> HttpResponse:
    """Give one open or withdrawn assignment to another qualified member of its panel (404 unless lead or staff)."""
    assignment = (Assignment.objects.select_related("panel", "cycle", "expert")
                  .filter(public_id=public_id).first())
    if assignment is None or not allowed(request.user, Action.MANAGE_PANEL_WORK, assignment.panel):
        raise Http404("No such assignment.")
    form = ReassignForm(request.POST or None, candidates=reassign_candidates(assignment=assignment))
    status = 200
    if request.method == "POST":
        status = 422
        if form.is_valid():
            try:
                new = assignment_reassign(assignment=assignment, to_expert=form.cleaned_data["to_expert"],
                                          actor=request.user)
            except ValidationError as exc:
                form.add_error(None, exc)
                status = 409
            else:
                messages.success(request, f"{public_id} reassigned to {new.expert.email} as {new.public_id}; "
                                          "they start from an empty form.")
                return redirect("annotations:lead_assignments")
    return render(request, "annotations/reassign.html", {"assignment": assignment, "form": form}, status=status)
