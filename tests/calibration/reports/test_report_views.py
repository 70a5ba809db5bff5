"""The report page, exports and API on stored scores; numbers checked against stats/ on the same ratings."""
from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import numpy as np
import pytest
from django.urls import reverse

from annotations.models import Assignment, SubScore
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.adjudication.services import adjudication_record
from evaluations.models import JudgeResult, JudgeRun, JudgeScore
from evidence.models import Snapshot
from stats.alpha import krippendorff_alpha
from stats.kappa import cohen_kappa
from tests.annotations.factories import world_build

CATS = [0, 1, 2, 3]


@pytest.fixture
def scored(db, immediate_tasks):
    return scored_world()


def compute(client, cycle, **form):
    """Ask for a new report version through the page (the worker computes it on commit)."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("calibration:report_compute", args=[cycle.pk]),
                               {"seed": 20260101, "n_resamples": 1000, **form})
    assert response.status_code == 302, response.content.decode()[:2000]
    snapshot = Snapshot.objects.filter(cycle=cycle).order_by("-version").first()
    assert snapshot.status == Snapshot.Status.READY, snapshot.error
    return snapshot


def scored_world():
    """A committed cycle whose items are all scored by their experts, and a finished judge run."""
    world = world_build(catholic_cases=4)
    rng = np.random.default_rng(4)
    assignments = Assignment.objects.select_related("expert", "item__response").order_by("item_id", "public_id")
    quality = {}
    for assignment in assignments:
        keys = sub_dimension_keys(assignment=assignment)
        base = quality.setdefault(assignment.item_id, rng.integers(0, 4))
        scores = {k: int(np.clip(base + rng.integers(-1, 2), 0, 3)) for k in keys}
        annotation_submit(assignment=assignment, actor=assignment.expert,
                          data=AnnotationInput(scores=scores, rationale="because"))
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="google/gemini-3-flash-preview",
                                  fallback_model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    for item_id, base in quality.items():
        assignment = Assignment.objects.filter(item_id=item_id).select_related("item__response").first()
        keys = sub_dimension_keys(assignment=assignment)
        result = JudgeResult.objects.create(run=run, response=assignment.item.response, judge_model=run.primary_model,
                                            role="primary", status="scored", composite=Decimal("0.5"), attempts=1)
        for key in keys:
            JudgeScore.objects.create(result=result, sub_dimension=key, raw_score=int(min(3, base + 1)), reasoning="ok")
    n = len(quality)
    JudgeRun.objects.filter(pk=run.pk).update(total_items=n, processed_items=n, scored_items=n)
    return world, run


def _expert_matrix(cycle):
    rows = list(SubScore.objects.filter(annotation__assignment__cycle=cycle, annotation__status="submitted")
                .values_list("annotation__assignment__expert_id", "annotation__assignment__item_id", "key", "score"))
    experts = sorted({r[0] for r in rows})
    units = sorted({(r[1], r[2]) for r in rows})
    data = np.full((len(experts), len(units)), np.nan)
    for expert, item, key, score in rows:
        data[experts.index(expert), units.index((item, key))] = score
    return data, units


def test_report_page_numbers_equal_stats_on_the_same_ratings(scored, client):
    world, run = scored
    client.force_login(world.admin)
    compute(client, world.cycle)
    page = client.get(reverse("calibration:report", args=[world.cycle.pk]))
    assert page.status_code == 200
    report = page.context["report"].to_json()
    overall = page.context["report"].to_json()["groups"][0]
    assert overall["kind"] == "overall"
    data, units = _expert_matrix(world.cycle)
    assert overall["experts"]["krippendorff_alpha"] == pytest.approx(krippendorff_alpha(data, "ordinal", CATS).alpha)
    judge = {(r.response_id, s.sub_dimension): s.raw_score for r in JudgeResult.objects.filter(run=run)
             for s in r.scores.all()}
    item_response = dict(world.cycle.items.values_list("id", "response_id"))
    jrow = np.array([judge[(item_response[item], key)] for item, key in units], dtype=float)
    majority = np.array([sorted(col[~np.isnan(col)])[(int((~np.isnan(col)).sum()) - 1) // 2] for col in data.T])
    vs = overall["judge_vs_majority"]
    assert vs["n_units"] == len(units)
    assert vs["alpha"] == pytest.approx(krippendorff_alpha(np.vstack([jrow, majority]), "ordinal", CATS).alpha)
    assert vs["quadratic_kappa"] == pytest.approx(cohen_kappa(jrow, majority, CATS, "quadratic"))
    assert report["meta"]["judge_run"] == run.pk and report["meta"]["rubric_version"] == "1.0"
    body = page.content.decode()
    assert "<svg" in body and "Judge vs adjudicated gold" in body
    # Statistics v2: every coefficient with its interval, the rater diagnostics and the judge's Bland–Altman line,
    # each equal to stats/ on the same ratings.
    from stats.diagnostics import bland_altman, rater_bias

    rows = {r.key: r for title, table in page.context["interval_tables"] for r in table if title.startswith("Experts")}
    assert {"krippendorff_alpha", "fleiss_kappa", "gwet_ac1"} <= set(rows)
    alpha_interval = rows["krippendorff_alpha"].interval
    assert [alpha_interval.low, alpha_interval.high] == overall["experts"]["alpha_ci"]
    assert alpha_interval.method in ("percentile", "bca") and isinstance(alpha_interval.reliable, bool)
    biases = {d.rater: d for d in page.context["diagnostics"]}
    expected = rater_bias(data, rater_labels=sorted(biases), categories=CATS)
    assert [biases[b.rater].mean_difference for b in expected] == pytest.approx([b.mean_difference for b in expected])
    assert all(d.expert for d in biases.values())  # the admin sees who the codes are
    ba = bland_altman(jrow, data)
    assert vs["bland_altman"]["mean_difference"] == pytest.approx(ba.mean_difference)
    assert 'data-testid="intervals"' in body and 'data-testid="rater-diagnostics"' in body
    assert 'data-testid="bland-altman"' in body


def test_exports_and_api_carry_the_same_report(scored, client):
    world, run = scored
    client.force_login(world.admin)
    compute(client, world.cycle)
    j = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "json"]))
    report = json.loads(j.content)
    assert report["meta"]["seed"] == 20260101 and "numpy" in report["meta"]["software"]
    c = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(c.content.decode())))
    overall_alpha = next(r for r in rows if r["group_kind"] == "overall" and r["comparison"] == "experts"
                         and r["metric"] == "krippendorff_alpha")
    assert float(overall_alpha["value"]) == pytest.approx(report["groups"][0]["experts"]["krippendorff_alpha"], abs=1e-6)
    pdf = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "pdf"]))
    assert pdf.content.startswith(b"%PDF")
    assert client.get(reverse("calibration:report_export", args=[world.cycle.pk, "xls"])).status_code == 404
    # The API (token auth, admins only) gives the same numbers for the same seed.
    from tests.accounts.api import token_auth

    client.logout()
    auth = token_auth(world.admin)
    api = client.get(reverse("api-cycle-report", args=[world.cycle.pk]), **auth)
    assert api.status_code == 200
    assert api.json()["report"]["groups"][0]["experts"]["alpha_ci"] == report["groups"][0]["experts"]["alpha_ci"]
    bad = client.get(reverse("api-cycle-report", args=[world.cycle.pk]), {"version": "many"}, **auth)
    assert bad.status_code == 400
    assert client.get(reverse("api-cycle-report", args=[world.cycle.pk]),
                      **token_auth(world.expert)).status_code == 403


def test_report_shows_agreement_before_adjudication_and_judge_against_gold_after(scored, client):
    world, run = scored
    from calibration.adjudication.selectors import item_states

    disputed = [s for s in item_states(cycle_ids=[world.cycle.pk]).values() if s.needs_adjudication]
    assert disputed, "the seeded scores should produce at least one disagreement"
    state = disputed[0]
    keys = list(state.scores)
    before = None
    client.force_login(world.admin)
    compute(client, world.cycle)
    before = client.get(reverse("calibration:report", args=[world.cycle.pk])).context["overall"]
    assert before.judge_vs_gold.n_units == 0
    adjudication_record(item_id=state.item_id, adjudicator=world.admin, scores=dict.fromkeys(keys, 2),
                        reason="rubric_ambiguity")
    page = client.get(reverse("calibration:report", args=[world.cycle.pk]))
    assert page.context["overall"] == before  # version 1 is frozen: the page says what changed instead
    assert "1 new gold decision since version 1" in page.content.decode()
    compute(client, world.cycle)
    after = client.get(reverse("calibration:report", args=[world.cycle.pk])).context["overall"]
    assert after.judge_vs_gold.n_units == len(keys)
    # Expert agreement is computed on the original scores: adjudication does not change it.
    assert after.experts.krippendorff_alpha == before.experts.krippendorff_alpha
