"""Exports are built by exporter modules: the same bytes and headers as the views' former hand-built bodies,
and rendering touches no database (so a stored report can later go through the same exporters)."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from calibration.adjudication.exporting import GOLD_EXPORTERS, GoldLabelSet
from calibration.adjudication.selectors import gold_labels, item_states
from calibration.adjudication.services import adjudication_record
from calibration.reports.exporting import REPORT_EXPORTERS
from calibration.reports.render import report_csv, report_json
from calibration.reports.schema import report_from_dict
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from tests.calibration.reports.test_report_views import scored_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def adjudicated(db):  # type: ignore[no-untyped-def]
    """The scored world with one disputed item adjudicated, so that gold labels exist."""
    world, run = scored_world()
    state = next(s for s in item_states(cycle_ids=[world.cycle.pk]).values() if s.needs_adjudication)
    adjudication_record(item_id=state.item_id, adjudicator=world.admin, scores=dict.fromkeys(state.scores, 2),
                        reason="misread_response", note="Ünïcode note")
    return world, run


def snapshot_report(cycle, admin):  # type: ignore[no-untyped-def]
    """Version 1 of the cycle's report, and its payload read back into the typed tree."""
    snapshot = report_snapshot_compute(snapshot_id=report_snapshot_request(cycle=cycle, requested_by=admin).pk)
    assert snapshot.status == "ready", snapshot.error
    return snapshot, report_from_dict(snapshot.payload)


def former_gold_bodies(cycle) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """What calibration.views.gold_export wrote by hand before the exporters (kept here as the reference)."""
    rows = gold_labels(cycle=cycle)
    fields = ["cycle", "case", "model", "run_label", "dimension", "sub_dimension", "gold_score", "reason",
              "decision_id", "adjudicated_at"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    body = json.dumps({"cycle": cycle.name, "rubric_version": cycle.rubric.version, "gold_labels": rows},
                      indent=2, ensure_ascii=False) + "\n"
    return {"csv": buffer.getvalue().encode("utf-8"), "json": body.encode("utf-8")}


def test_gold_label_downloads_are_byte_identical_to_the_former_view(adjudicated, client) -> None:  # type: ignore[no-untyped-def]
    world, _ = adjudicated
    client.force_login(world.admin)
    expected = former_gold_bodies(world.cycle)
    assert expected["csv"].count(b"\n") > 1
    for query, fmt, content_type in (({}, "csv", "text/csv"), ({"format": "json"}, "json", "application/json"),
                                     ({"format": "xml"}, "csv", "text/csv")):
        response = client.get(reverse("calibration:gold_export", args=[world.cycle.pk]), query)
        assert response.status_code == 200
        assert response.content == expected[fmt], query
        assert response["Content-Type"] == content_type
        assert response["Content-Disposition"] == f'attachment; filename="gold-labels-cycle-{world.cycle.pk}.{fmt}"'


def test_report_downloads_are_the_exporters_bytes(adjudicated, client) -> None:  # type: ignore[no-untyped-def]
    world, _ = adjudicated
    client.force_login(world.admin)
    _, report = snapshot_report(world.cycle, world.admin)
    expected = {"csv": report_csv(report).encode("utf-8"), "json": report_json(report).encode("utf-8")}
    for fmt, content_type in (("csv", "text/csv"), ("json", "application/json"), ("pdf", "application/pdf")):
        response = client.get(reverse("calibration:report_export", args=[world.cycle.pk, fmt]))
        assert response.status_code == 200 and response["Content-Type"] == content_type
        assert response["Content-Disposition"] == f'attachment; filename="irr-report-cycle-{world.cycle.pk}-v1.{fmt}"'
        if fmt == "pdf":
            assert response.content.startswith(b"%PDF-")
        else:
            assert response.content == expected[fmt]
    assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, "xml"])).status_code == 404


def test_exporters_render_a_built_report_without_the_database(adjudicated, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    world, _ = adjudicated
    _, report = snapshot_report(world.cycle, world.admin)
    labels = GoldLabelSet(cycle=world.cycle.name, rubric_version=world.cycle.rubric.version,
                          rows=gold_labels(cycle=world.cycle))
    with django_assert_num_queries(0):
        outputs = [exporter.render(report) for exporter in REPORT_EXPORTERS.values()]
        outputs += [exporter.render(labels) for exporter in GOLD_EXPORTERS.values()]
    assert all(isinstance(body, bytes) and body for body in outputs)
    assert json.loads(GOLD_EXPORTERS["json"].render(labels))["gold_labels"][0]["reason"] == "misread_response"
