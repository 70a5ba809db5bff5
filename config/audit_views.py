"""The audit trail's page for admins (/audit/): filter by actor, action and dates; the same rows as CSV."""
from __future__ import annotations

import io
from urllib.parse import urlencode

from django import forms
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from access.policy import Action, policy_required
from audit.models import AuditEvent
from audit.selectors import AuditFilter, audit_event_row, audit_events
from evaluations.spreadsheet import csv_writer

PAGE_SIZE = 100
CSV_COLUMNS = ("at", "action", "actor_id", "subject_user_id", "target_type", "target_id", "target", "detail", "ip",
               "path")


class AuditFilterForm(forms.Form):
    actor = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1, label=gettext_lazy("Actor (user id)"))
    # The actions' labels are messages (evaluations.domain.LABELS): shown in the interface language.
    action = forms.ChoiceField(required=False, label=gettext_lazy("Action"), choices=[
        ("", gettext_lazy("any action")),
        *((value, gettext_lazy(label)) for value, label in AuditEvent.Action.choices)])  # noqa: INT001
    since = forms.DateField(required=False, label=gettext_lazy("From (YYYY-MM-DD)"))
    until = forms.DateField(required=False, label=gettext_lazy("To (YYYY-MM-DD, inclusive)"))

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            self.add_error("until", "the end date is before the start date")
        return data

    def filters(self) -> AuditFilter:
        data = self.cleaned_data
        return AuditFilter(actor_id=data.get("actor"), action=data.get("action") or "", since=data.get("since"),
                           until=data.get("until"))


def _form(request: HttpRequest) -> AuditFilterForm:
    return AuditFilterForm({key: request.GET.get(key, "") for key in ("actor", "action", "since", "until")})


@policy_required(Action.VIEW_AUDIT)
@require_http_methods(["GET"])
def audit_log(request: HttpRequest) -> HttpResponse:
    """The audit trail, newest first, 100 a page; a bad filter is a 400 naming the field."""
    form = _form(request)
    if not form.is_valid():
        return render(request, "audit/log.html", {"form": form, "page_obj": None, "query": ""}, status=400)
    page = Paginator(audit_events(filters=form.filters()), PAGE_SIZE).get_page(request.GET.get("page"))
    query = urlencode({key: value for key, value in request.GET.items() if key != "page" and value})
    return render(request, "audit/log.html", {"form": form, "page_obj": page,
                                              "query": f"{query}&" if query else "", "export_query": query})


@policy_required(Action.VIEW_AUDIT)
@require_http_methods(["GET"])
def audit_log_export(request: HttpRequest) -> HttpResponse:
    """The filtered rows as CSV (formula cells escaped); the export itself is recorded like every export."""
    form = _form(request)
    if not form.is_valid():
        errors = "; ".join(f"{field}: {' '.join(str(m) for m in messages)}" for field, messages in form.errors.items())
        return HttpResponse(errors, status=400, content_type="text/plain; charset=utf-8")
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(CSV_COLUMNS)
    for event in audit_events(filters=form.filters()).iterator(chunk_size=2000):
        row = audit_event_row(event)
        row["detail"] = _json(row["detail"])
        writer.writerow([row[column] if row[column] is not None else "" for column in CSV_COLUMNS])
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="audit-trail.csv"'
    return response


def _json(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=False)
