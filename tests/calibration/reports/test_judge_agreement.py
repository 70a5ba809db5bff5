"""Judge comparison and run-to-run agreement (issue 15 parts 4 and 5) with fake judges built to disagree on one
dimension, and to jitter between runs: flagged where they do, not where they do not; high-spread responses listed."""
from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from calibration.validation.agreement import ALL, runs_agreement
from calibration.validation.store import bias_checks
from evaluations.judge.leaderboard import case_composite
from evaluations.models import JudgeResult, JudgeRun, JudgeScore, ModelResponse
from evaluations.selectors import rubric_weights
from tests.evaluations.judge.conftest import import_benchmark

pytestmark = pytest.mark.django_db


def fake_run(rubric, model: str, score) -> JudgeRun:  # type: ignore[no-untyped-def]
    """A finished run whose raw score for (response, sub-dimension) is score(response, dimension, key)."""
    run = JudgeRun.objects.create(rubric=rubric, primary_model=model, base_url="http://127.0.0.1:9/v1",
                                  status=JudgeRun.Status.FINISHED)
    sub_weights = {dimension: subs for dimension, (_, subs) in rubric_weights(rubric=rubric).items()}
    responses = list(ModelResponse.objects.values_list("pk", "test_case__dimension"))
    for response_id, dimension in responses:
        raw = {key: score(response_id, dimension, key) for key in sub_weights[dimension]}
        composite = case_composite(raw_scores=raw, sub_weights=sub_weights[dimension])
        result = JudgeResult.objects.create(run=run, response_id=response_id, judge_model=model, role="primary",
                                            status="scored", composite=composite.quantize(Decimal("0.000001")),
                                            attempts=1)
        JudgeScore.objects.bulk_create(JudgeScore(result=result, sub_dimension=k, raw_score=v, reasoning="r")
                                       for k, v in raw.items())
    JudgeRun.objects.filter(pk=run.pk).update(total_items=len(responses), processed_items=len(responses),
                                              scored_items=len(responses))
    return run


@pytest.fixture
def judges(tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=36)
    truth = {}
    rng = np.random.default_rng(3)

    def true(response_id: int, dimension: str, key: str) -> int:
        return truth.setdefault((response_id, key), int(rng.integers(0, 4)))

    noise = np.random.default_rng(8)
    a = fake_run(rubric_v1, "judge-a", true)
    b = fake_run(rubric_v1, "judge-b", lambda r, d, k: int(noise.integers(0, 4)) if d == "doctrinal" else true(r, d, k))
    jitter = [fake_run(rubric_v1, "judge-a", lambda r, d, k: int(np.clip(true(r, d, k) + noise.choice([-1, 0, 1]),
                                                                          0, 3))) for _ in range(3)]
    return a, b, jitter


def test_two_judges_that_disagree_on_one_dimension_are_flagged_there_only(judges) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = judges
    result = runs_agreement(runs=[a, b], n_resamples=200)
    groups = result["groups"]
    assert groups["doctrinal"]["flagged"] and groups["doctrinal"]["alpha"] < 0.3
    for dimension in ("textual", "hermeneutical", "historical", "apologetics", "intertextual"):
        assert groups[dimension]["alpha"] == pytest.approx(1.0) and not groups[dimension]["flagged"], dimension
        assert groups[dimension]["verdict"] in ("pass", "uncertain")
    assert result["flagged"]
    assert result["review"] and {row["dimension"] for row in result["review"]} == {"doctrinal"}


def test_a_judge_that_jitters_between_runs_has_a_lower_run_to_run_alpha(judges) -> None:  # type: ignore[no-untyped-def]
    a, _, jitter = judges
    jittery = runs_agreement(runs=[a, *jitter], n_resamples=200, alpha_min=0.80)  # as the "runs" check holds it
    assert 0.4 < jittery["groups"][ALL]["alpha"] < 0.80 and jittery["mean_item_sd"] > 0.02
    assert jittery["flagged"] and jittery["groups"][ALL]["verdict"] == "fail"
    assert jittery["groups"][ALL]["alpha_ci"][0] < jittery["groups"][ALL]["alpha"] < jittery["groups"][ALL]["alpha_ci"][1]
    same = runs_agreement(runs=[a, fake_run(a.rubric, "judge-a", lambda r, d, k: int(
        JudgeScore.objects.get(result__run=a, result__response_id=r, sub_dimension=k).raw_score))], n_resamples=0)
    assert same["groups"][ALL]["alpha"] == pytest.approx(1.0) and same["review"] == [] and not same["flagged"]


def test_the_command_stores_checks_and_refuses_what_is_not_a_comparison(judges) -> None:  # type: ignore[no-untyped-def]
    a, b, jitter = judges
    out = io.StringIO()
    call_command("judge_bias", "judges", "--run", str(a.pk), "--run", str(b.pk), "--resamples", "100", stdout=out)
    assert "doctrinal" in out.getvalue() and "FLAGGED" in out.getvalue()
    call_command("judge_bias", "runs", *sum((["--run", str(r.pk)] for r in [a, *jitter]), []), "--resamples", "0",
                 stdout=io.StringIO())
    assert [(c.check_kind, c.n) for c in bias_checks().order_by("id")] == [("judges", 108), ("runs", 108)]
    from annotations.models import Panel
    from evaluations.models import Tradition  # the benchmark's traditions need panels for the review cycle
    from tests.annotations.factories import person

    for t in Tradition.objects.all():
        panel = Panel.objects.create(name=f"{t.key} panel", tradition=t)
        panel.members.set([person(tradition=t)])
    review = io.StringIO()
    call_command("judge_bias", "judges", "--run", str(a.pk), "--run", str(b.pk), "--resamples", "0",
                 "--review-cycle", "Judge disagreements", stdout=review)
    from annotations.models import CalibrationCycle, CycleItem

    cycle = CalibrationCycle.objects.get(name="Judge disagreements")
    queued = set(CycleItem.objects.filter(cycle=cycle).values_list("response_id", flat=True))
    listed = {row["response"] for row in bias_checks().order_by("-id").first().payload["review"]}
    assert queued == listed and "queued for expert review" in review.getvalue()
    with pytest.raises(CommandError, match="one judge"):
        call_command("judge_bias", "runs", "--run", str(a.pk), "--run", str(b.pk))
    with pytest.raises(CommandError, match="two or more"):
        call_command("judge_bias", "judges", "--run", str(a.pk))
    with pytest.raises(CommandError, match="no judge run 999999"):
        call_command("judge_bias", "judges", "--run", str(a.pk), "--run", "999999")
