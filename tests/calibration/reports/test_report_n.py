"""Every n a report shows for the experts' α is one number, the pairable units, on the page, PDF, JSON and CSV.

Issue 25, item 5: the summary said "n = 320 pairable units of 384" while the forest plot said "n=384". Here one
item is scored by a single expert, so its units are not pairable and the two quantities differ.
"""
from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal

import numpy as np
import pytest
from django.urls import reverse

from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from evaluations.models import JudgeResult, JudgeRun, JudgeScore
from tests.annotations.factories import world_build
from tests.calibration.reports.test_report_pdf import pdf_pages
from tests.calibration.reports.test_report_views import compute

PAIRABLE = re.compile(r"n = (\d+) pairable units")
ANY_N = re.compile(r"\bn ?= ?(\d+)")  # also today's unlabelled "n=384"


@pytest.fixture
def partly_scored(db, immediate_tasks):
    """A committed cycle where every item but one is scored by all its experts; that one by its first expert only."""
    world = world_build(catholic_cases=4)
    rng = np.random.default_rng(4)
    assignments = list(Assignment.objects.select_related("expert", "item__response").order_by("item_id", "public_id"))
    lone_item = next(a.item_id for a in assignments
                     if sum(b.item_id == a.item_id for b in assignments) >= 2)
    scored_lone = False
    quality = {}
    for assignment in assignments:
        if assignment.item_id == lone_item:
            if scored_lone:
                continue
            scored_lone = True
        keys = sub_dimension_keys(assignment=assignment)
        base = quality.setdefault(assignment.item_id, rng.integers(0, 4))
        scores = {k: int(np.clip(base + rng.integers(-1, 2), 0, 3)) for k in keys}
        annotation_submit(assignment=assignment, actor=assignment.expert,
                          data=AnnotationInput(scores=scores, rationale="because"))
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="google/gemini-3-flash-preview",
                                  fallback_model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    for item_id, base in quality.items():
        assignment = next(a for a in assignments if a.item_id == item_id)
        result = JudgeResult.objects.create(run=run, response=assignment.item.response, judge_model=run.primary_model,
                                            role="primary", status="scored", composite=Decimal("0.5"), attempts=1)
        for key in sub_dimension_keys(assignment=assignment):
            JudgeScore.objects.create(result=result, sub_dimension=key, raw_score=int(min(3, base + 1)), reasoning="ok")
    JudgeRun.objects.filter(pk=run.pk).update(total_items=len(quality), processed_items=len(quality),
                                              scored_items=len(quality))
    return world


def test_every_n_shown_for_the_experts_alpha_is_the_pairable_units(partly_scored, client):
    world = partly_scored
    client.force_login(world.admin)
    compute(client, world.cycle, n_resamples=200)  # few resamples: the test is about n, not the bounds
    report = json.loads(client.get(reverse("calibration:report_export", args=[world.cycle.pk, "json"])).content)
    top = report["groups"][0]
    assert top["kind"] == "overall"
    pairable = top["experts"]["n_pairable_units"]
    assert 0 < pairable < top["n_units"]  # the lone item's units are not pairable: the two quantities differ

    shown: dict[str, list[int]] = {}
    body = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    summary = body[body.index('data-testid="experts-summary"'):body.index('data-testid="judge-summary"')]
    shown["page summary"] = [int(n) for n in PAIRABLE.findall(summary)]
    plot = body[body.index('id="plot-experts"'):body.index('id="plot-judge"')]
    shown["page forest plot, overall row"] = [int(n) for n in ANY_N.findall(plot)[:1]]
    table = body[body.index('id="groups"'):]
    overall_row = table[table.index("<strong>Overall</strong>"):]
    shown["page groups table, overall row"] = [int(re.search(r'<td class="num">(\d+)</td>', overall_row).group(1))]

    pages = pdf_pages(client.get(reverse("calibration:report_export", args=[world.cycle.pk, "pdf"])).content)
    lines = [line for page in pages for line in page.splitlines()]
    summary_line = next(line for line in lines if "P(α <" in line)
    shown["PDF summary"] = [int(n) for n in PAIRABLE.findall(summary_line)]
    plotted = [line for line in lines if line.startswith("Overall ") and ANY_N.search(line)]
    shown["PDF forest plot, overall row"] = [int(n) for n in ANY_N.findall(plotted[0])]  # experts' plot first
    table_row = next(line for line in lines if line.startswith("Overall ") and not ANY_N.search(line))
    shown["PDF groups table, overall row"] = [int(table_row.split()[1])]

    rows = csv.DictReader(io.StringIO(client.get(reverse("calibration:report_export",
                                                          args=[world.cycle.pk, "csv"])).content.decode()))
    shown["CSV"] = sorted({int(r.get("n_pairable_units") or r["n_units"]) for r in rows
                           if r["group_kind"] == "overall" and r["comparison"] == "experts"})
    shown["JSON"] = [pairable]

    assert all(values == [pairable] for values in shown.values()), shown
    # … and each is labelled as pairable units
    assert "pairable units</th>" in table[:table.index("<tbody>")]
    assert PAIRABLE.findall(plot)[:1] == [str(pairable)] and PAIRABLE.search(plotted[0])
    assert "n_pairable_units" in rows.fieldnames
