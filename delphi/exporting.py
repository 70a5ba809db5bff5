"""Exporters of a Delphi study report (`report.delphi_report_build`): the built report in, bytes out.

No database access here, so a stored snapshot of a report renders to the same bytes as the live one.
"""
from __future__ import annotations

import json

from django.core.serializers.json import DjangoJSONEncoder

from .schema import DelphiReport

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


def study_report_json(report: DelphiReport) -> bytes:
    """The whole report as indented UTF-8 JSON; datetimes and Decimals as Django's JSON encoder writes them."""
    return json.dumps(report, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False).encode("utf-8")


def study_report_filename(*, study_id: int) -> str:
    return f"delphi-study-{study_id}.json"
