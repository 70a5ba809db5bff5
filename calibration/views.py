"""Calibration pages for admins (staff): overview, panels, drawing a cycle (preview → commit), progress."""
from __future__ import annotations

import csv
import io
import json
from collections import defaultdict

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.http import AuthedRequest
from evaluations.models import Dimension, Tradition

from .adjudication.selectors import gold_labels
from .forms import DrawForm, random_seed
from .models import CalibrationCycle
from .permissions import staff_required
from .reports.build import overall
from .reports.render import (
    confusion_svg,
    forest_plot_svg,
    forest_rows,
    rater_rows,
    report_csv,
    report_json,
    report_pdf,
)
from .reports.selectors import cycle_report as cycle_report_build
from .selectors import cycle_item_counts, cycle_latest, cycle_progress, panel_size_warnings, panels_with_sizes
from .services import cycle_commit, cycle_draw_compute


def _report_context(report: dict) -> dict:
    """Group the stratification rows by dimension, with readable names, for the table template."""
    traditions = dict(Tradition.objects.values_list("key", "name"))
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


@staff_required
@require_GET
def index(request: AuthedRequest) -> HttpResponse:
    """Overview: panel warnings and the cycles, newest first, a page at a time."""
    cycles = CalibrationCycle.objects.select_related("previous").defer("draw_report", "previous__draw_report")
    page = Paginator(cycles, CYCLES_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "calibration/index.html", {
        "warnings": panel_size_warnings(), "cycles": page.object_list, "page_obj": page,
    })


@staff_required
@require_GET
def panels(request: AuthedRequest) -> HttpResponse:
    """Panels with their size against the tradition's minimum."""
    return render(request, "calibration/panels.html", {"panels": panels_with_sizes(), "warnings": panel_size_warnings()})


@staff_required
@require_http_methods(["GET", "POST"])
def draw(request: AuthedRequest) -> HttpResponse:
    """Draw a calibration set: the preview shows the stratification table; "Commit" stores and assigns."""
    if request.method == "GET":
        latest = cycle_latest()
        form = DrawForm(initial={
            "name": f"Cycle {CalibrationCycle.objects.count() + 1}",
            "seed": random_seed(), "previous": latest, "neutral_panel": latest.neutral_panel if latest else None,
            "show_reference_answers": False,
        })
        return render(request, "calibration/draw.html", {"form": form})
    form = DrawForm(request.POST)
    if not form.is_valid():
        return render(request, "calibration/draw.html", {"form": form}, status=422)
    params = form.params()
    if request.POST.get("action") == "commit":
        try:
            cycle, report = cycle_commit(
                name=form.cleaned_data["name"], params=params, previous=form.cleaned_data["previous"],
                neutral_panel=form.cleaned_data["neutral_panel"],
                show_reference_answers=form.cleaned_data["show_reference_answers"],
                created_by=request.user, expected_fingerprint=form.cleaned_data["fingerprint"] or None,
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"{cycle} committed: {report.assignments} assignments for "
                                      f"{report.experts} experts.")
            for note in report.notes:
                messages.warning(request, note)
            return redirect("calibration:cycle", pk=cycle.pk)
    result = cycle_draw_compute(params=params, previous=form.cleaned_data["previous"])
    data = request.POST.copy()
    data["fingerprint"] = result.fingerprint
    context = {"form": DrawForm(data), "preview": True, "total": len(result.items),
               "warnings": panel_size_warnings(), **_report_context(result.as_report())}
    return render(request, "calibration/draw.html", context)


@staff_required
@require_GET
def cycle(request: AuthedRequest, pk: int) -> HttpResponse:
    """A committed cycle: its parameters, item counts and recorded stratification table."""
    obj = get_object_or_404(CalibrationCycle.objects.select_related("previous", "neutral_panel", "rubric"), pk=pk)
    return render(request, "calibration/cycle.html",
                  {"cycle": obj, "counts": cycle_item_counts(cycle=obj), **_report_context(obj.draw_report)})


@staff_required
@require_GET
def progress(request: AuthedRequest) -> HttpResponse:
    """Per panel and per expert: done / total and median time per item."""
    cycles = list(CalibrationCycle.objects.defer("draw_report")[:100])
    selected = None
    if request.GET.get("cycle", "").isdigit():
        selected = next((c for c in cycles if c.pk == int(request.GET["cycle"])), None)
    selected = selected or (cycles[0] if cycles else None)
    rows = cycle_progress(cycle=selected) if selected else []
    return render(request, "calibration/progress.html", {"cycles": cycles, "selected": selected, "panels": rows})


CYCLES_PAGE_SIZE = 50
GOLD_FIELDS = ["cycle", "case", "model", "run_label", "dimension", "sub_dimension", "gold_score", "reason",
               "decision_id", "adjudicated_at"]


@staff_required
@require_GET
def gold_export(request: AuthedRequest, pk: int) -> HttpResponse:
    """Download a cycle's current gold labels (?format=csv or json) for the benchmark pipeline."""
    cycle = get_object_or_404(CalibrationCycle, pk=pk)
    rows = gold_labels(cycle=cycle)
    fmt = request.GET.get("format", "csv")
    if fmt == "json":
        body = json.dumps({"cycle": cycle.name, "rubric_version": cycle.rubric.version, "gold_labels": rows},
                          indent=2, ensure_ascii=False) + "\n"
        response = HttpResponse(body, content_type="application/json")
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=GOLD_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv")
        fmt = "csv"
    response["Content-Disposition"] = f'attachment; filename="gold-labels-cycle-{cycle.pk}.{fmt}"'
    return response


REPORT_FORMATS = {"csv": "text/csv", "json": "application/json", "pdf": "application/pdf"}


def _report_args(request: AuthedRequest) -> dict:
    run = request.GET.get("run")
    return {"run_id": int(run) if run and run.isdigit() else None}


@staff_required
@require_GET
def cycle_report(request: AuthedRequest, pk: int) -> HttpResponse:
    """The IRR report of a cycle: experts, judge vs majority and vs gold, with charts and verdicts."""
    cycle = get_object_or_404(CalibrationCycle.objects.select_related("rubric"), pk=pk)
    report, inputs, run = cycle_report_build(cycle=cycle, **_report_args(request))
    summary = overall(report)
    return render(request, "calibration/report.html", {
        "cycle": cycle, "run": run, "report": report, "overall": summary,
        "raters": rater_rows(summary, inputs.rater_key),
        "experts_plot": forest_plot_svg(forest_rows(report, "experts"), title="Experts among themselves: α (ordinal)"),
        "judge_plot": forest_plot_svg(forest_rows(report, "judge_vs_majority"),
                                      title="Judge against the expert majority: α (ordinal)"),
        "gold_confusion": confusion_svg(summary["judge_vs_gold"]["confusion"], title="Judge vs adjudicated gold",
                                        reference="gold"),
        "majority_confusion": confusion_svg(summary["judge_vs_majority"]["confusion"],
                                            title="Judge vs expert majority", reference="majority"),
        "query": request.GET.urlencode(),
    })


@staff_required
@require_GET
def cycle_report_export(request: AuthedRequest, pk: int, fmt: str) -> HttpResponse:
    """The same report as CSV (long format), JSON (everything) or PDF."""
    if fmt not in REPORT_FORMATS:
        raise Http404("Unknown format.")
    cycle = get_object_or_404(CalibrationCycle.objects.select_related("rubric"), pk=pk)
    report, _, _ = cycle_report_build(cycle=cycle, **_report_args(request))
    body = {"csv": report_csv, "json": report_json, "pdf": report_pdf}[fmt](report)
    response = HttpResponse(body, content_type=REPORT_FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="irr-report-cycle-{cycle.pk}.{fmt}"'
    return response
