"""The Delphi study report: built as data (report.py), rendered by its exporter — byte-identical to the former view."""
from __future__ import annotations

import json

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.test import Client
from django.urls import reverse

from delphi.exporting import study_report_json
from delphi.models import DelphiStudy
from delphi.report import delphi_report_build
from delphi.selectors import named_allocations, study_warnings, weight_structure
from delphi.services import delphi_proposal_approve, delphi_study_close
from tests.delphi.factories import close, submit_all

pytestmark = pytest.mark.django_db


def former_report_body(study) -> bytes:  # type: ignore[no-untyped-def]
    """What delphi.views.report_json built by hand before the exporter (kept here as the reference)."""
    structure = weight_structure(rubric=study.rubric)
    rounds = []
    for r in study.rounds.order_by("number"):
        rounds.append({"number": r.number, "status": r.status, "opened_at": r.opened_at, "closed_at": r.closed_at,
                       "invited": r.invited, "responded": r.responded, "converged": r.converged,
                       "summary": r.summary, "allocations": named_allocations(round=r, structure=structure)})
    data = {
        "study": {"id": study.pk, "name": study.name, "tradition": study.tradition.key if study.tradition else None,
                  "rubric": study.rubric.version, "planned_rounds": study.planned_rounds,
                  "convergence_threshold": str(study.convergence_threshold), "status": study.status,
                  "converged": study.converged, "panelists": study.panelists.count(),
                  "proposed_rubric": study.proposed_rubric.version if study.proposed_rubric else None},
        "warnings": study_warnings(study=study),
        "weights": [{"key": f.key, "name": f.name, "current": str(f.current)} for f in structure.fields],
        "rounds": rounds,
        "proposal": study.proposal,
        "rescoring": study.rescoring,
    }
    return json.dumps(data, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False).encode("utf-8")


def test_study_report_download_is_byte_identical_to_the_former_view(dworld, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    submit_all(dworld, dworld.round(1), [-12, -6, 0, 6, 12])
    close(dworld.round(1), dworld)
    submit_all(dworld, dworld.round(2), [-2, -1, 0, 1, 2])
    close(dworld.round(2), dworld)
    delphi_study_close(study=dworld.study, actor=dworld.admin)
    delphi_proposal_approve(study=dworld.study, actor=dworld.admin, version="1.1-ü")
    # Read back as the view reads it: PostgreSQL's jsonb returns the stored JSON's keys in its own order.
    study = DelphiStudy.objects.get(pk=dworld.study.pk)
    client = Client()
    client.force_login(dworld.admin)
    response = client.get(reverse("delphi:report_json", args=[study.pk]))
    assert response.status_code == 200
    assert response.content == former_report_body(study)
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="delphi-study-{study.pk}.json"'
    report = delphi_report_build(study=study)
    with django_assert_num_queries(0):
        body = study_report_json(report)
    assert body == response.content and "1.1-ü".encode() in body
