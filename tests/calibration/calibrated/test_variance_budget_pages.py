"""Variance budget and score-history pages (issue 26 items 3–4): the selector's table from stored judge results
(routes, repetitions, a judge-run series), the page and CSV, and the history with anchor equating and marked
changes. The statistics themselves: tests/stats/test_variance_budget.py and test_score_history.py."""
from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from annotations.models import CalibrationCycle
from calibration.calibrated.history import score_history
from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
from calibration.calibrated.variance import variance_budget_page
from evaluations.models import GenerationCondition, JudgeResult, JudgeRun, RubricVersion
from stats.variance_budget import variance_budget
from tests.annotations.factories import CaseFactory, EvaluatedModelFactory, ModelResponseFactory, person

pytestmark = pytest.mark.django_db


def run_finished(rubric: RubricVersion, *, repeat_of: JudgeRun | None = None, finished_minutes: int = 0) -> JudgeRun:
    return JudgeRun.objects.create(rubric=rubric, primary_model="google/gemini-3-flash-preview",
                                   base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED,
                                   repeat_of=repeat_of, total_items=1, processed_items=1, scored_items=1,
                                   finished_at=timezone.now() - timedelta(minutes=100 - finished_minutes))


def judge_score_add(run: JudgeRun, response, value: float) -> None:  # type: ignore[no-untyped-def]
    JudgeResult.objects.create(run=run, response=response, judge_model=run.primary_model, role="primary",
                               status="scored", composite=Decimal(str(round(value, 6))), attempts=1)


def test_variance_budget_page_builds_the_case_route_repetition_run_table(client, rubric_v1,  # type: ignore[no-untyped-def]
                                                                       django_assert_max_num_queries) -> None:
    # 6 cases × 2 routes (conditions differing only in route) × 2 repetitions × 2 judge runs, one model; a third
    # condition that also changes the temperature is left out, and one case missing a cell is dropped.
    model = EvaluatedModelFactory(name="vendor/budget-model")
    standard = GenerationCondition.objects.standard()
    other_route = GenerationCondition.objects.create(
        name="route-b", route="provider-b", temperature=standard.temperature, max_tokens=standard.max_tokens,
        system_prompt=standard.system_prompt, language=standard.language)
    hot = GenerationCondition.objects.create(
        name="hot", temperature=Decimal("1.20"), max_tokens=standard.max_tokens,
        system_prompt=standard.system_prompt, language=standard.language)
    first = run_finished(rubric_v1)
    second = run_finished(rubric_v1, repeat_of=first, finished_minutes=5)
    rng = np.random.default_rng(4)
    expected = np.empty((6, 2, 2, 2))
    cases = [CaseFactory() for _ in range(7)]
    for c, case in enumerate(cases):
        for p, condition in enumerate((standard, other_route)):
            for r in (1, 2):
                response = ModelResponseFactory(test_case=case, model=model, condition=condition, repetition=r)
                for j, run in enumerate((first, second)):
                    value = float(np.clip(0.5 + 0.1 * c - 0.05 * p + rng.normal(0, 0.05), 0, 1))
                    if c == 6 and j == 1 and p == 1 and r == 2:
                        continue  # an incomplete case: one cell not scored by the second run
                    judge_score_add(run, response, value)
                    if c < 6:
                        expected[c, p, r - 1, j] = round(value, 6)
        hot_response = ModelResponseFactory(test_case=case, model=model, condition=hot)
        judge_score_add(first, hot_response, 0.99)

    page = variance_budget_page(run=first)
    (budget,) = page.models
    assert budget.cases_used == 6 and budget.cases_left_out == 1
    assert budget.budget is not None and budget.budget.shape == (6, 2, 2, 2)
    assert any("hot" in note for note in budget.notes)
    reference = variance_budget(expected)  # every case "medium": equal weights
    assert budget.budget.total.se == pytest.approx(reference.total.se, rel=1e-9)
    assert budget.budget.mean == pytest.approx(expected.mean(), rel=1e-9)

    # the page reads the budget stored with a calibrated version (here one on a cycle without labels: no judge error)
    cycle = CalibrationCycle.objects.create(name="No labels yet", rubric=rubric_v1, seed=1)
    calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=first, cycle=cycle, requested_by=None, n_resamples=20).pk)
    lead = person(User.Role.ADJUDICATOR)
    client.force_login(lead)
    with django_assert_max_num_queries(14):  # session, user, run, the stored version
        html = client.get(reverse("calibrated:budget", args=[first.pk])).content.decode()
    assert "vendor/budget-model" in html and 'data-testid="total-interval"' in html
    assert "Provider route" in html and "budget-bar" in html
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("calibrated:budget_export", args=[first.pk]))
                                           .content.decode())))
    assert rows[0]["model"] == "vendor/budget-model" and rows[0]["routes"] == "2" and rows[0]["judge_runs"] == "2"
    assert float(rows[0]["total_se"]) == pytest.approx(reference.total.se, rel=1e-5)


def test_variance_budget_history_equates_rotations_on_anchors_and_marks_changes(client, rubric_v1) -> None:  # type: ignore[no-untyped-def]
    # Two snapshots on different rotations: rotation B's own cases are much harder (every model scores 0.4 lower on
    # them), the anchors are shared. Model "up" improves by 0.2 on the anchors, "flat" does not change.
    # Raw scores fall for both; the anchor-equated score must rise by 0.2 for "up" and stay for "flat",
    # and only "up"'s change is marked.
    anchors = [CaseFactory(is_anchor=True) for _ in range(8)]
    rot_a = [CaseFactory(rotation="2026-h1") for _ in range(8)]
    rot_b = [CaseFactory(rotation="2026-h2") for _ in range(8)]
    up, flat = EvaluatedModelFactory(name="vendor/up"), EvaluatedModelFactory(name="vendor/flat")
    old, new = run_finished(rubric_v1), run_finished(rubric_v1, finished_minutes=10)
    rng = np.random.default_rng(9)
    for model, gain in ((up, 0.2), (flat, 0.0)):
        for i, case in enumerate(anchors):
            base = 0.4 + 0.02 * i
            response = ModelResponseFactory(test_case=case, model=model)
            judge_score_add(old, response, base)
            judge_score_add(new, response, base + gain + rng.normal(0, 0.01))
        for i, case in enumerate(rot_a):
            judge_score_add(old, ModelResponseFactory(test_case=case, model=model), 0.7 + 0.01 * i)
        for i, case in enumerate(rot_b):
            judge_score_add(new, ModelResponseFactory(test_case=case, model=model), 0.3 + gain + 0.01 * i)

    history = score_history(rubric_id=rubric_v1.pk)
    assert history.rotations_differ
    assert [s.run_id for s in history.snapshots] == [old.pk, new.pk]
    by_model = {h.model: h for h in history.models}
    up_first, up_second = by_model["vendor/up"].points
    flat_first, flat_second = by_model["vendor/flat"].points
    assert up_second.score < up_first.score  # raw scores mislead: rotation B is harder
    assert up_second.equated - up_first.equated == pytest.approx(0.2, abs=0.02)
    assert flat_second.equated - flat_first.equated == pytest.approx(0.0, abs=0.02)
    assert up_second.change.n == 8 and up_second.changed and not flat_second.changed

    client.force_login(person(User.Role.ADMIN))
    html = client.get(reverse("calibrated:history")).content.decode()
    assert "anchor-equated" in html and html.count('data-testid="changed-row"') == 1
    assert "2026-h1" in html and "history-chart" in html
    rows = list(csv.DictReader(io.StringIO(client.get(reverse("calibrated:history_export")).content.decode())))
    assert {(r["model"], r["change_exceeds_interval"]) for r in rows if r["change"]} == {
        ("vendor/up", "yes"), ("vendor/flat", "no")}


def test_variance_budget_history_refuses_a_bad_rubric_naming_the_field(client, rubric_v1) -> None:  # type: ignore[no-untyped-def]
    client.force_login(person(User.Role.ADMIN))
    response = client.get(reverse("calibrated:history"), {"rubric": "abc"})
    assert response.status_code == 400 and b"rubric:" in response.content


def test_variance_budget_history_page_query_count_is_bounded(client, rubric_v1, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    model = EvaluatedModelFactory(name="vendor/q")
    cases = [CaseFactory() for _ in range(4)]
    responses = [ModelResponseFactory(test_case=case, model=model) for case in cases]
    for k in range(3):
        run = run_finished(rubric_v1, finished_minutes=k)
        for i, response in enumerate(responses):
            judge_score_add(run, response, 0.3 + 0.1 * i + 0.01 * k)
    client.force_login(person(User.Role.ADMIN))
    # per snapshot: its columns, its leaderboard's cache key (2) and, on a miss, its columns again
    with django_assert_max_num_queries(12 + 4 * 3):
        assert client.get(reverse("calibrated:history")).status_code == 200


def test_variance_budget_is_in_the_calibrated_bundle_and_recomputes_from_it() -> None:
    # One judge run (no repeats, one route): the budget has case sampling and judge error; judge error is this
    # version's shift, exactly, and the bundle's CSV recomputes from its own inputs and report.json.
    import json
    import zipfile

    from calibration.calibrated.schema import CalibratedReport
    from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
    from calibration.calibrated.variance import (
        budget_compute,
        budget_inputs_parse,
        report_shifts,
        variance_budget_csv,
    )
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, run = judged_world()
    snapshot = calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=run, cycle=world.cycle, requested_by=world.admin, n_resamples=100).pk)
    bundle = zipfile.ZipFile(io.BytesIO(bytes(snapshot.files.get(format="bundle").content)))
    names = {n.split("/", 1)[1]: n for n in bundle.namelist()}
    stored = bundle.read(names["variance_budget.csv"])
    report = CalibratedReport.from_json(json.loads(bundle.read(names["report.json"])))
    rows = budget_inputs_parse(bundle.read(names["variance_budget_inputs.csv"]))
    assert variance_budget_csv(budget_compute(rows, shifts=report_shifts(report))) == stored
    shifts = report_shifts(report)
    table = list(csv.DictReader(io.StringIO(stored.decode())))
    assert table and all(r["judge_run_share"] == "" for r in table)  # one judge run: not estimable, never 0
    for r in table:
        assert float(r["judge_error_term"]) == pytest.approx(shifts[r["model"]].se ** 2, rel=1e-5)
    assert "variance_budget.csv" in bundle.read(names["SHA256SUMS"]).decode()


def test_condition_delta_tables_are_in_the_calibrated_bundle() -> None:
    """The per-condition leaderboards and deltas of the run go into each calibrated version's citable bundle,
    computed with the version's seed and resamples (issue 26: exports in the snapshot bundle)."""
    import zipfile

    from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
    from evaluations.judge.conditions import DELTA_FIELDS, condition_report_build, condition_report_csv
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, run = judged_world()
    snapshot = calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=run, cycle=world.cycle, requested_by=world.admin, n_resamples=100).pk)
    bundle = zipfile.ZipFile(io.BytesIO(bytes(snapshot.files.get(format="bundle").content)))
    names = {n.split("/", 1)[1]: n for n in bundle.namelist()}
    stored = bundle.read(names["conditions.csv"]).decode()
    assert stored == condition_report_csv(condition_report_build(run=run, n_resamples=100, seed=snapshot.seed))
    rows = list(csv.reader(io.StringIO(stored)))
    assert rows[0][:3] == ["run", "condition", "model"] and DELTA_FIELDS in rows
    assert {r[1] for r in rows[1:rows.index([])]} == {"standard"}  # the world's responses: the standard condition
    assert "conditions.csv" in bundle.read(names["SHA256SUMS"]).decode()


def test_variance_budget_of_a_model_served_by_one_route_keeps_its_cases_when_another_model_has_two() -> None:
    """Routes are per model: in the demo, gpt-4o is served by two routes and claude by one; claude's cases are
    complete for its one route (its route share not estimable), not all dropped for lacking the other route."""
    import random

    from calibration.calibrated.variance import BudgetRow, budget_compute

    rng = random.Random(3)
    rows = [BudgetRow("two-routes", case, 1.0, route, rep, 1, rng.random())
            for case in range(8) for route in ("standard", "route-b") for rep in (1, 2)]
    rows += [BudgetRow("one-route", case, 1.0, "standard", 1, 1, rng.random()) for case in range(8)]
    budgets = {m.model: m for m in budget_compute(rows, shifts={}, route_labels=[
        "standard (default routing)", "route-b (provider-b)"])}
    one, two = budgets["one-route"], budgets["two-routes"]
    assert one.cases_used == 8 and one.cases_left_out == 0 and one.routes == ["standard (default routing)"]
    assert one.budget is not None and one.budget.shares["route"] is None  # one route: not estimable
    assert two.cases_used == 8 and two.routes == ["route-b (provider-b)", "standard (default routing)"]
    assert two.budget is not None and two.budget.shares["route"] is not None


def test_variance_budget_page_shows_the_figures_stored_with_the_newest_version_and_computes_nothing(client) -> None:  # type: ignore[no-untyped-def]
    # The page and its CSV read what the worker stored: the CSV download is the bundle's variance_budget.csv byte
    # for byte, and new judge results after the version change nothing on the page until a new version is computed.
    import zipfile

    from calibration.calibrated import selectors
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, run = judged_world()
    client.force_login(world.admin)
    empty = client.get(reverse("calibrated:budget", args=[run.pk]))
    assert 'data-testid="no-budget"' in empty.content.decode()
    assert client.get(reverse("calibrated:budget_export", args=[run.pk])).status_code == 302
    snapshot = calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=run, cycle=world.cycle, requested_by=world.admin, n_resamples=50).pk)
    bundle = zipfile.ZipFile(io.BytesIO(bytes(snapshot.files.get(format="bundle").content)))
    stored = next(bundle.read(n) for n in bundle.namelist() if n.endswith("/variance_budget.csv"))
    assert client.get(reverse("calibrated:budget_export", args=[run.pk])).content == stored
    JudgeResult.objects.filter(run=run).update(composite=Decimal("0.5"))  # would change every budget if recomputed
    assert client.get(reverse("calibrated:budget_export", args=[run.pk])).content == stored
    page = selectors.variance_budget_stored(run=run)
    assert page is not None and page.calibrated_version == snapshot.version and page.series == [run.pk]
    html = client.get(reverse("calibrated:budget", args=[run.pk])).content.decode()
    assert f"leaderboard version {snapshot.version}, whose shift is the judge error" in " ".join(html.split())
