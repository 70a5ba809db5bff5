"""The validation status page and its exports (admins: it shows judge output)."""
from __future__ import annotations

import csv
import io
import json

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from access.policy import Action, policy_required
from accounts.http import AuthedRequest
from annotations.models import CalibrationCycle
from evaluations.domain import query_whole_number
from evaluations.spreadsheet import csv_dict_protect

from .status import ValidationStatus, validation_rows, validation_status

FIELDS = ["part", "dimension", "tradition", "value", "ci_low", "ci_high", "n", "n_experts", "state", "date", "source"]


def _status(request: AuthedRequest) -> ValidationStatus | HttpResponse:
    raw = request.GET.get("cycle", "")
    if raw:
        pk = query_whole_number(raw)
        if pk is None:
            return HttpResponseBadRequest("cycle: must be a cycle id (a whole number)")
        return validation_status(cycle=get_object_or_404(CalibrationCycle, pk=pk))
    return validation_status()


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def validation(request: AuthedRequest) -> HttpResponse:
    """Per dimension × tradition: is the judge validated; each bias check: passed, failed, not run."""
    status = _status(request)
    if isinstance(status, HttpResponse):
        return status
    cycles = CalibrationCycle.objects.filter(report_snapshots__status="ready").distinct().order_by("-id")[:50]
    return render(request, "calibration/validation.html", {"status": status, "cycles": cycles})


@policy_required(Action.VIEW_JUDGE_OUTPUT)
@require_GET
def validation_export(request: AuthedRequest, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404(f"Unknown format {fmt[:20]!r}: use csv or json.")
    status = _status(request)
    if isinstance(status, HttpResponse):
        return status
    rows = validation_rows(status)
    if fmt == "json":
        body = json.dumps({"cycle": status.cycle.pk if status.cycle else None,
                           "report_version": status.snapshot.version if status.snapshot else None,
                           "rows": rows}, indent=2, default=str).encode()
        content_type = "application/json"
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(csv_dict_protect({k: "" if v is None else v for k, v in row.items()}) for row in rows)
        body, content_type = buffer.getvalue().encode(), "text/csv"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="validation-status.{fmt}"'
    return response
