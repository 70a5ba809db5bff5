"""Calibration pages for admins (staff): overview, panels, drawing a cycle (preview → commit), progress."""
from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from access.policy import Action, policy_required
from access.web import query_whole_number
from accounts.http import AuthedRequest
from evaluations.models import Dimension

from .forms import DrawForm, random_seed
from .selectors import (
    cycle_count,
    cycle_detail,
    cycle_inclusion_counts,
    cycle_item_counts,
    cycle_latest,
    cycle_progress,
    cycles_overview,
    cycles_recent,
    panel_size_warnings,
    panels_with_sizes,
    tradition_names,
)
from .services import cycle_commit, cycle_draw_preview


def _report_context(report: dict) -> dict:
    """Group the stratification rows by dimension, with readable names, for the table template."""
    traditions = tradition_names()
    dimensions = dict(Dimension.choices)
    rows_by_dimension: dict[str, list[dict]] = defaultdict(list)
    for row in report.get("strata", []):
        rows_by_dimension[row["dimension"]].append(
            {**row, "tradition_name": traditions.get(row["tradition"], "Tradition-neutral") if row["tradition"]
             else "Tradition-neutral"}
        )
    sections = [
        {"summary": {**summary, "name": dimensions.get(summary["dimension"], summary["dimension"])},
         "rows": rows_by_dimension.get(summary["dimension"], [])}
        for summary in report.get("dimensions", [])
    ]
    return {"sections": sections, "notes": report.get("notes", []), "fingerprint": report.get("fingerprint", "")}


@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def index(request: AuthedRequest) -> HttpResponse:
    """Overview: panel warnings and the cycles, newest first, a page at a time."""
    cycles = cycles_overview()
    page = Paginator(cycles, CYCLES_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "calibration/index.html", {
        "warnings": panel_size_warnings(), "cycles": page.object_list, "page_obj": page,
    })


@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def panels(request: AuthedRequest) -> HttpResponse:
    """Panels with their size against the tradition's minimum."""
    return render(request, "calibration/panels.html", {"panels": panels_with_sizes(), "warnings": panel_size_warnings()})


@policy_required(Action.MANAGE_CALIBRATION)
@require_http_methods(["GET", "POST"])
def draw(request: AuthedRequest) -> HttpResponse:
    """Draw a calibration set: the preview shows the stratification table; "Commit" stores and assigns."""
    if request.method == "GET":
        latest = cycle_latest()
        form = DrawForm(initial={
            "name": f"Cycle {cycle_count() + 1}",
            "seed": random_seed(), "previous": latest, "neutral_panel": latest.neutral_panel if latest else None,
            "show_reference_answers": False,
        })
        return render(request, "calibration/draw.html", {"form": form})
    form = DrawForm(request.POST)
    if not form.is_valid():
        return render(request, "calibration/draw.html", {"form": form}, status=422)
    params = form.params()
    refused = None
    if form.commit:
        try:
            cycle, report = cycle_commit(
                name=form.cleaned_data["name"], params=params, previous=form.cleaned_data["previous"],
                neutral_panel=form.cleaned_data["neutral_panel"],
                show_reference_answers=form.cleaned_data["show_reference_answers"],
                created_by=request.user, expected_fingerprint=form.cleaned_data["fingerprint"] or None,
                retest=form.retest_settings(),
            )
        except ValidationError as exc:
            refused = exc
        else:
            messages.success(request, f"{cycle} committed: {report.assignments} assignments for "
                                      f"{report.experts} experts.")
            for note in report.notes:
                messages.warning(request, note)
            return redirect("calibration:cycle", pk=cycle.pk)
    preview = cycle_draw_preview(params=params, previous=form.cleaned_data["previous"])
    result = preview.result
    preview_form = form.with_fingerprint(result.fingerprint)
    if refused is not None:
        preview_form.add_error(None, refused)  # e.g. the pool changed since the preview: here is the new one
    context = {"form": preview_form, "preview": True, "total": len(result.items), "half_widths": preview.half_widths,
               "strategy": params.strategy,
               "warnings": panel_size_warnings(), **_report_context(result.as_report())}
    return render(request, "calibration/draw.html", context)


@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def cycle(request: AuthedRequest, pk: int) -> HttpResponse:
    """A committed cycle: its parameters, item counts and recorded stratification table."""
    obj = cycle_detail(pk=pk)
    return render(request, "calibration/cycle.html",
                  {"cycle": obj, "counts": cycle_item_counts(cycle=obj), "inclusion": cycle_inclusion_counts(cycle=obj),
                   **_report_context(obj.draw_report)})


@policy_required(Action.MANAGE_CALIBRATION)
@require_GET
def progress(request: AuthedRequest) -> HttpResponse:
    """Per panel and per expert: done / total and median time per item."""
    cycles = cycles_recent(limit=100)
    selected = None
    cycle_id = query_whole_number(request.GET.get("cycle"))
    if cycle_id is not None:
        selected = next((c for c in cycles if c.pk == cycle_id), None)
    selected = selected or (cycles[0] if cycles else None)
    rows = cycle_progress(cycle=selected) if selected else []
    return render(request, "calibration/progress.html", {"cycles": cycles, "selected": selected, "panels": rows})


CYCLES_PAGE_SIZE = 50
