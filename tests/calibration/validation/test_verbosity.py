"""Verbosity bias of a judge run (issue 15 part 2) with fake judges built to have the bias or not: a judge that
scores longer answers higher is flagged; one that follows only the experts is not, although longer answers are
better; the command prints and stores the check."""
from __future__ import annotations

import io
import json
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import call_command

from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.validation.store import bias_checks
from calibration.validation.verbosity import ALL, verbosity_analysis
from evaluations.models import JudgeResult, JudgeRun, ModelResponse
from tests.annotations.factories import world_build

pytestmark = pytest.mark.django_db
CASES = 80  # world_build caps a tradition's cases: 50 doctrinal responses, 54 in all


def world_with_judges():  # type: ignore[no-untyped-def]
    """Experts score each item by its quality; answers are longer the better they are; two judge runs."""
    world = world_build(catholic_cases=CASES)
    rng = np.random.default_rng(11)
    quality: dict[int, float] = {}
    for assignment in Assignment.objects.select_related("item__response").order_by("item_id", "public_id"):
        q = quality.setdefault(assignment.item.response_id, float(rng.uniform(0, 3)))
        scores = {k: int(np.clip(round(q + rng.normal(scale=0.3)), 0, 3)) for k in sub_dimension_keys(assignment=assignment)}
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(scores=scores,
                                                                                               rationale="seen"))
    words = {}
    for response_id, q in quality.items():
        n = int(120 + 60 * (0.6 * (q - 1.5) + 0.8 * rng.normal()))
        words[response_id] = max(20, n)
        ModelResponse.objects.filter(pk=response_id).update(text=" ".join(["hesed"] * words[response_id]))
    z = {r: (w - np.mean(list(words.values()))) / np.std(list(words.values())) for r, w in words.items()}
    runs = {}
    for name, effect in (("fair", 0.0), ("verbose", 0.25)):
        run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model=f"{name}-judge",
                                      base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED)
        for response_id, q in quality.items():
            composite = np.clip(q / 3 + effect * z[response_id] + rng.normal(scale=0.03), 0, 1)
            JudgeResult.objects.create(run=run, response_id=response_id, judge_model=run.primary_model, role="primary",
                                       status="scored", composite=Decimal(f"{composite:.6f}"), attempts=1)
        JudgeRun.objects.filter(pk=run.pk).update(total_items=len(quality), processed_items=len(quality),
                                                  scored_items=len(quality))
        runs[name] = run
    return world, runs


def test_a_length_driven_judge_is_flagged_and_a_fair_one_is_not() -> None:
    world, runs = world_with_judges()
    fair = verbosity_analysis(run=runs["fair"], cycle=world.cycle)
    verbose = verbosity_analysis(run=runs["verbose"], cycle=world.cycle)
    assert fair["n"] == verbose["n"] >= 24
    assert verbose["groups"][ALL]["flagged"] and verbose["flagged"]
    assert verbose["groups"][ALL]["partial"]["r"] > 0.5 and verbose["groups"][ALL]["slope_per_100_words"] > 0
    assert "normalised_spread" in verbose["groups"][ALL]  # shown beside the raw score when flagged
    per_model = verbose["groups"][ALL]["models"]
    assert set(per_model) == {m.name for m in world.models}
    longer = max(per_model, key=lambda m: per_model[m]["mean_words"])
    shorter = min(per_model, key=lambda m: per_model[m]["mean_words"])
    if longer != shorter:  # normalising takes from the model with longer answers and gives to the shorter one
        assert per_model[longer]["length_normalised"] <= per_model[longer]["raw"]
        assert per_model[shorter]["length_normalised"] >= per_model[shorter]["raw"]
    assert not fair["groups"][ALL]["flagged"]
    assert abs(fair["groups"][ALL]["partial"]["r"]) < 0.3
    assert fair["groups"][ALL]["pearson"]["r"] > 0.3  # the raw r alone would have blamed the fair judge
    assert fair["groups"][ALL]["reference_pearson"]["r"] > 0.3  # because the experts also prefer longer answers
    without = verbosity_analysis(run=runs["fair"])  # no experts: the raw r is what is read, and it is flagged
    assert without["groups"][ALL]["basis"] == "pearson" and without["groups"][ALL]["partial"] is None


def test_the_command_prints_and_stores_the_check() -> None:
    world, runs = world_with_judges()
    out = io.StringIO()
    call_command("judge_bias", "verbosity", "--run", str(runs["verbose"].pk), "--cycle", str(world.cycle.pk),
                 stdout=out)
    assert "FLAGGED" in out.getvalue() and ALL in out.getvalue()
    check = bias_checks().get()
    assert check.flagged and check.judge_run == runs["verbose"] and check.cycle == world.cycle and check.n >= 24
    out = io.StringIO()
    call_command("judge_bias", "verbosity", "--run", str(runs["fair"].pk), "--cycle", str(world.cycle.pk),
                 "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["flagged"] is False
