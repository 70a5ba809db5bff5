"""IRT difficulty from stored scores and anchor equating of two rotations, through the services and the command."""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from django.core.management import call_command

from casereview.difficulty import DifficultyError, difficulty_equate, difficulty_fit, response_scores
from casereview.reports import difficulty_fit_store, difficulty_fits
from evaluations.models import EvaluatedModel, JudgeResult, JudgeRun, JudgeScore, ModelResponse, TestCase
from evaluations.selectors import rubric_active, rubric_weights
from stats.irt import grm_simulate

pytestmark = pytest.mark.django_db


def judged_world(*, items: list[int], a, b, theta, rng, rotation: dict[int, str] | None = None, tiers=None,
                 prefix: str = "m") -> JudgeRun:
    """Cases `c<index>` (rotation per index, "" = an anchor), models `<prefix><i>` with abilities `theta`, and one
    finished judge run whose decisive scores are GRM draws: every sub-dimension of the doctrinal dimension gets the
    same raw score, so the composite × 3 is that score."""
    rubric = rubric_active()
    subs = rubric_weights(rubric=rubric)["doctrinal"][1]
    run = JudgeRun.objects.create(rubric=rubric, primary_model="judge", base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    models = [EvaluatedModel.objects.create(name=f"{prefix}{i:03d}", provider="P", family="f") for i in range(len(theta))]
    x = grm_simulate(theta, a[items], b[items], rng)
    for j, index in enumerate(items):
        where = (rotation or {}).get(index, "r1")
        case, _ = TestCase.objects.get_or_create(external_id=f"c{index:03d}", defaults={
            "dimension": "doctrinal", "difficulty": (tiers or {}).get(index, "medium"),
            "question_type": "factual_recall", "prompt": "Q", "is_anchor": where == "", "rotation": where})
        for i, model in enumerate(models):
            response = ModelResponse.objects.create(test_case=case, model=model, text="A")
            score = int(x[i, j])
            result = JudgeResult.objects.create(run=run, response=response, judge_model="judge", role="primary",
                                                status="scored", composite=Decimal(score) / 3)
            JudgeScore.objects.bulk_create(JudgeScore(result=result, sub_dimension=k, raw_score=score) for k in subs)
    return run


def bank(rng, n):
    a = np.exp(rng.normal(0.3, 0.3, n))
    b = np.sort(rng.normal(0, 1, n)[:, None] + np.array([-1.0, 0, 1.0]) + rng.normal(0, 0.2, (n, 3)), axis=1)
    return a, b


def test_fit_from_judge_scores_recovers_difficulty_and_compares_tiers(capsys):
    rng = np.random.default_rng(1)
    a, b = bank(rng, 40)
    order = np.argsort(b.mean(axis=1))
    tiers = {int(i): ["easy", "medium", "hard", "expert"][k * 4 // 40] for k, i in enumerate(order)}
    run = judged_world(items=list(range(40)), a=a, b=b, theta=rng.normal(0, 1, 60), rng=rng, tiers=tiers)
    cases, models, matrix, sources = response_scores(dimension="doctrinal", judge_run=run)
    assert matrix.shape == (60, 40) and set(np.unique(matrix)) <= {0, 1, 2, 3}
    assert all(s == {"expert": 0, "judge": 60} for s in sources.values())
    call_command("irt_fit", "--dimension", "doctrinal", "--judge-run", str(run.pk))
    out = capsys.readouterr().out
    fit = difficulty_fits().get()
    est = {i["case"]: i["difficulty"] for i in fit.payload["items"]}
    true = [b[int(c[1:])].mean() for c in est]
    assert np.corrcoef(list(est.values()), true)[0, 1] > 0.85
    assert fit.payload["tiers"]["spearman_rho"] > 0.7  # tiers were assigned by true difficulty
    assert "Spearman ρ" in out and "m000" in out and fit.persons == 60


def test_two_rotations_equated_through_anchors(capsys):
    """Rotation r2's models are 0.8 logits more able; fitted separately each centres its own models, so r2's
    items look 0.8 easier. Through 15 anchors, B comes back near +0.8 and r2's unique items land on r1's scale."""
    rng = np.random.default_rng(4)
    a, b = bank(rng, 75)
    anchors, r1, r2 = list(range(15)), list(range(15, 45)), list(range(45, 75))
    def standard(v):  # the samples' own mean 0 and SD 1, so the shift between them is exactly 0.8
        return (v - v.mean()) / v.std()

    where = {**dict.fromkeys(anchors, ""), **dict.fromkeys(r2, "r2")}
    judged_world(items=anchors + r1, rotation=where, a=a, b=b, theta=standard(rng.normal(0, 1, 150)), rng=rng)
    # the second rotation: new models, 0.8 more able, answering the anchors again and their own items
    run2 = judged_world(items=anchors + r2, rotation=where, a=a, b=b, theta=standard(rng.normal(0, 1, 150)) + 0.8,
                        rng=rng, prefix="n")
    call_command("irt_fit", "--dimension", "doctrinal", "--rotation", "r1", "--judge-run", str(run2.pk - 1))
    base = difficulty_fits().get()
    call_command("irt_fit", "--dimension", "doctrinal", "--rotation", "r2", "--judge-run", str(run2.pk),
                 "--equate-to", str(base.pk))
    out = capsys.readouterr().out
    other = difficulty_fits().exclude(pk=base.pk).get()
    eq = other.payload["equating"]
    assert len(eq["anchors"]) == 15 and other.equated_to_id == base.pk
    assert abs(eq["stocking_lord"]["B"] - 0.8) < 0.3 and abs(eq["mean_sigma"]["B"] - 0.8) < 0.3
    equated = {i["case"]: i["difficulty"] for i in eq["items"]}
    unique = [f"c{i:03d}" for i in r2]
    error = np.mean([equated[c] - b[int(c[1:])].mean() for c in unique])
    raw = np.mean([next(i["difficulty"] for i in other.payload["items"] if i["case"] == c) - b[int(c[1:])].mean()
                   for c in unique])
    assert abs(error) < abs(raw) and abs(error) < 0.3  # equating removed most of the −0.8 offset
    assert "Stocking–Lord" in out and "rotation r2 on the scale of fit" in out
    from django.test import Client
    from django.urls import reverse

    from accounts.models import User

    client = Client()
    client.force_login(User.objects.create_superuser(email="irt@faithbench.test", password="x"))
    page = client.get(reverse("review:difficulty") + f"?fit={other.pk}").content.decode()
    assert "Rotation <strong>r2</strong>, equated to fit" in page and "n000" in page
    with pytest.raises(DifficultyError, match="share 0 anchor"):
        difficulty_equate(base=base, other=difficulty_fit_store(dimension="doctrinal", rotation="", items=2, persons=2,
                                                                payload={"items": [], "models": []}))


def test_errors_are_clear():
    with pytest.raises(DifficultyError, match="0 evaluated model"):
        difficulty_fit(dimension="doctrinal")
