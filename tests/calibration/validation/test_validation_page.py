"""The validation status page (issue 15 part 7): its cells are the report snapshot's, which are what the cells
service computes from the cycle's rows; each check shows passed / failed / not run / not built yet; exports agree."""
from __future__ import annotations

import csv
import io
import re
from html import unescape

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from calibration.cycles.ratings import report_inputs
from calibration.reports.cells import validation_cells, validation_status_of
from calibration.validation.store import bias_checks
from calibration.validation.verbosity import verbosity_check
from evaluations.models import TestCase
from evidence.kit.trees import tree_to_json
from tests.calibration.reports.test_report_views import compute, scored_world


@pytest.fixture
def scored(db, immediate_tasks):  # type: ignore[no-untyped-def]
    return scored_world()


def test_status_words_follow_the_interval() -> None:
    assert validation_status_of(0.9, [0.82, 0.95]) == "validated"
    assert validation_status_of(0.85, [0.70, 0.95]) == "acceptable"
    assert validation_status_of(0.6, [0.5, 0.66]) == "not validated"
    assert validation_status_of(0.7, [0.6, 0.8]) == "uncertain"
    assert validation_status_of(None, None) == "no data"
    assert validation_status_of(0.81, None) == "validated"  # no bootstrap: the point decides
    assert validation_status_of(1.0, [1.0, 1.0], n=4) == "too few units"  # 4 units agreeing prove little
    assert validation_status_of(0.9, [0.85, 0.95], n=30) == "validated"


def test_the_page_shows_the_snapshot_cells_and_every_check(scored, client) -> None:  # type: ignore[no-untyped-def]
    world, run = scored
    client.force_login(world.admin)
    empty = client.get(reverse("calibration:validation")).content.decode()
    assert "No report snapshot with validation cells yet" in empty
    snapshot = compute(client, world.cycle, n_resamples=200)
    cells = snapshot.payload["validation"]
    inputs = report_inputs(cycle=world.cycle, run=run)
    assert cells == tree_to_json(validation_cells(inputs.ratings, judge=inputs.judge, units=inputs.units,
                                                  n_resamples=200, seed=snapshot.seed))  # the stored cells are the service's, from the same rows
    assert {(c["dimension"], c["tradition"]) for c in cells} == {(u.dimension, u.tradition) for u in inputs.units}
    verbosity_check(run=run, cycle=world.cycle)
    html = client.get(reverse("calibration:validation")).content.decode()
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    for cell in cells:
        shown = re.search(rf'data-cell="{cell["dimension"]}/{cell["tradition"]}">(.*?)</td>', html, re.S)
        assert shown, cell
        body = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", shown.group(1)))).strip()
        assert body.startswith(cell["status"]) and f"α {floatformat(cell['alpha'], 3)}" in body
        assert f"{cell['n_judged']} of {cell['n_units']} units" in body
    check = bias_checks().get()
    assert f"Verbosity (§6.2.2) {'failed' if check.flagged else 'passed'}" in text
    assert "Position bias (§6.2.1) not run" in text and "Judge comparison (§6.3.2) not run" in text
    assert "Tradition fairness (§6.2.3) not run" in text
    exported = list(csv.DictReader(io.StringIO(client.get(reverse("calibration:validation_export", args=["csv"]))
                                               .content.decode())))
    judge_rows = [r for r in exported if r["part"] == "judge_alpha"]
    assert len(judge_rows) == len(cells) and judge_rows[0]["state"] == cells[0]["status"]
    assert any(r["part"] == "check:verbosity" and r["n"] == str(check.n) for r in exported)
    data = client.get(reverse("calibration:validation_export", args=["json"]) + f"?cycle={world.cycle.pk}").json()
    case_rows = [r for r in data["rows"] if r["part"] == "cases_validated"]
    assert data["report_version"] == snapshot.version and len(data["rows"]) == len(cells) + 5 + len(case_rows)
    # no case review yet: every active case counted, none validated
    assert case_rows and sum(r["n"] for r in case_rows) == TestCase.objects.active().count()
    assert all(r["value"] == 0 for r in case_rows)
    assert f"0 of {TestCase.objects.active().count()} active cases are human-validated" in text
    assert client.get(reverse("calibration:validation") + "?cycle=abc").status_code == 400
    assert client.get(reverse("calibration:validation") + "?cycle=999999").status_code == 404
    assert client.get(reverse("calibration:validation_export", args=["xlsx"])).status_code == 404


def test_the_page_costs_a_constant_number_of_queries(scored, client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    world, run = scored
    client.force_login(world.admin)
    compute(client, world.cycle, n_resamples=0)
    for _ in range(5):
        verbosity_check(run=run, cycle=world.cycle)
    with django_assert_max_num_queries(12):  # + the finished runs and the cycles of the "run this check" forms
        assert client.get(reverse("calibration:validation")).status_code == 200
