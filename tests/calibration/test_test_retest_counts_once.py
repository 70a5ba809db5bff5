"""Re-served (test–retest) items never count twice (issue 34 item 2): every report, estimate and queue computed
from a cycle is the same before its re-served items exist, while they are open, and after they are scored —
scored *against* the first scoring, so that counting them anywhere would move a figure — and the panel health page
reports the experts' intra-rater agreement from the real pairs, with words when there are too few."""
from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotation, Assignment, CalibrationCycle, CycleItem
from annotations.retests import retests_serve_all
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.adjudication.selectors import adjudication_queue, item_states
from calibration.calibrated.selectors import calibrated_inputs, label_arrivals
from calibration.cycles.fair_truth import severity_adjusted_truth
from calibration.cycles.ratings import report_inputs
from calibration.cycles.selectors import cycle_assignment_completeness, cycle_progress
from calibration.cycles.truth import median_seconds_per_item, response_truths
from calibration.panelhealth.selectors import panel_health, panel_health_csv
from calibration.reports.build import calibration_report_build
from calibration.validation.tradition import tradition_fairness
from evaluations.models import JudgeResult, JudgeRun
from tests.annotations.factories import world_build

pytestmark = pytest.mark.django_db


def _submit(assignment: Assignment, scores: dict[str, int], seconds: int = 60) -> None:
    annotation_submit(assignment=assignment, actor=assignment.expert, seconds=seconds,
                      data=AnnotationInput(scores=scores, rationale="because"))


def _scored_world(cases: int = 6) -> tuple[Any, JudgeRun]:
    """A cycle every expert scored three weeks ago (noisy around a per-item level), with a finished judge run."""
    world = world_build(catholic_cases=cases)
    CycleItem.objects.filter(cycle=world.cycle).update(inclusion_probability=1.0, inclusion_basis="drawn")
    rng = np.random.default_rng(3)
    level: dict[int, int] = {}
    for assignment in Assignment.objects.select_related("expert").order_by("item_id", "public_id"):
        keys = sub_dimension_keys(assignment=assignment)
        base = level.setdefault(assignment.item_id, int(rng.integers(0, 4)))
        _submit(assignment, {k: int(np.clip(base + rng.integers(-1, 2), 0, 3)) for k in keys})
    Annotation.objects.update(submitted_at=timezone.now() - timedelta(days=21))
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="google/gemini-3-flash-preview",
                                  fallback_model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    for item in CycleItem.objects.filter(cycle=world.cycle).select_related("response"):
        JudgeResult.objects.create(run=run, response=item.response, judge_model=run.primary_model, role="primary",
                                   status="scored", composite=Decimal(level.get(item.pk, 1)) / 3, attempts=1)
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(retest_share=Decimal("0.5"))
    return world, run


def _everything(world: Any, run: JudgeRun) -> dict[str, Any]:
    """Every counted figure of the cycle, as plain data."""
    cycle = CalibrationCycle.objects.get(pk=world.cycle.pk)
    inputs = report_inputs(cycle=cycle, run=run)
    report = calibration_report_build(inputs.ratings, judge=inputs.judge, gold=inputs.gold, units=inputs.units,
                                      n_resamples=50, seed=1).to_json()
    health = panel_health(panel=world.catholic, cycle=cycle)
    return {
        "report": report,
        "ratings": sorted((r.unit.key, r.rater, r.score) for r in inputs.ratings),
        "calibrated_inputs": calibrated_inputs(run=run, cycle=cycle),
        "arrivals": label_arrivals(cycle=cycle),
        "truth": response_truths(cycle=cycle),
        "gold_truth": response_truths(cycle=cycle, basis="gold"),
        "severity_truth": severity_adjusted_truth(cycle=cycle),
        "seconds": median_seconds_per_item(cycle=cycle),
        "adjudication_queue": adjudication_queue(user=world.lead),
        "item_states": {k: (sorted(v.rater_ids), v.unfinished, {key: sorted(x) for key, x in v.scores.items()},
                            v.needs_adjudication)
                        for k, v in item_states(cycle_ids=[cycle.pk]).items()},
        "progress": cycle_progress(cycle=cycle),
        "completeness": cycle_assignment_completeness(cycle=cycle),
        "fairness": tradition_fairness(cycle=cycle),
        "panel_health": (health.alpha_all, health.n_ratings,
                         [(r.name, r.n_ratings, r.n_items, r.gold_agreement, r.panel_deviation, r.alpha_without)
                          for r in health.rows]),
    }


def test_test_retest_scores_never_count_twice_in_any_report_or_estimate() -> None:
    world, run = _scored_world()
    before = _everything(world, run)
    assert before["report"]["groups"] and before["adjudication_queue"]  # something to compare, disagreements too
    served = retests_serve_all()
    assert served >= 6
    retests = list(Assignment.objects.retests().select_related("expert", "retest_of"))
    assert len(retests) == served
    assert _everything(world, run) == before  # open re-served items hold nothing back

    for retest in retests:  # scored as far as possible from the first scoring
        first = {s.key: s.score for s in retest.retest_of.annotations.get().scores.all()}
        _submit(retest, {k: 3 - v for k, v in first.items()}, seconds=999)
    after = _everything(world, run)
    for name, value in before.items():
        assert after[name] == value, name


def test_test_retest_panel_health_reports_intra_rater_agreement_from_the_real_pairs() -> None:
    world, _run = _scored_world(cases=8)
    retests_serve_all()
    for retest in Assignment.objects.retests().select_related("retest_of"):  # a faithful re-scoring: same scores
        first = {s.key: s.score for s in retest.retest_of.annotations.get().scores.all()}
        _submit(retest, first)
    health = panel_health(panel=world.catholic, cycle=world.cycle)
    figures = health.retest
    assert figures is not None and figures.panel is not None
    assert figures.panel.exact == "1.00"  # identical re-scorings: exact agreement 1, κ 1
    assert figures.panel.kappa == "1.00"
    assert figures.panel.exact_interval  # with an interval
    assert len(figures.rows) == 3  # every expert of the panel, by name (the page is the lead's)
    for row in figures.rows:
        assert row.n_pairs == 4 * row.n_items  # four sub-dimensions per doctrinal item
    body = panel_health_csv(health)
    lines = [line for line in csv.reader(io.StringIO(body)) if line and line[0] == "# test-retest"]
    assert any("Panel (all experts)" in line for line in lines)


def test_test_retest_too_few_pairs_and_off_are_words_on_the_page_and_in_the_export() -> None:
    world, _run = _scored_world(cases=2)
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(retest_share=Decimal("0.25"))
    retests_serve_all()
    retest = Assignment.objects.retests().filter(panel=world.catholic).select_related("retest_of").first()
    first = {s.key: s.score for s in retest.retest_of.annotations.get().scores.all()}
    _submit(retest, first)
    health = panel_health(panel=world.catholic, cycle=world.cycle)
    row = next(r for r in health.retest.rows if r.n_pairs)
    assert row.exact == "—" and "at least 10 are needed" in row.note  # 4 pairs: words, not a number
    client = Client(raise_request_exception=False)
    client.force_login(world.lead)
    url = reverse("calibration:panel_health", kwargs={"panel_id": world.catholic.pk})
    page = client.get(url)
    assert page.status_code == 200
    assert "at least 10 are needed" in page.content.decode() and "nan" not in page.content.decode().lower().replace(
        "nonce", "")
    Assignment.objects.retests().delete()
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(retest_enabled=False)
    export = client.get(reverse("calibration:panel_health_export", kwargs={"panel_id": world.catholic.pk}))
    assert export.status_code == 200
    assert "Test–retest is off in every cycle of this scope" in export.content.decode()
