"""Judge results for Delphi tests, stored through the judge pipeline's own services (no HTTP)."""
from __future__ import annotations

from decimal import Decimal

from evaluations.judge.leaderboard import case_composite
from evaluations.judge.outcomes import ItemOutcome, ResultRecord, ScoreRecord
from evaluations.judge.services import judge_results_store, judge_run_create, judge_run_finish
from evaluations.models import EvaluatedModel, JudgeResult, JudgeRun, ModelResponse, RubricVersion
from evaluations.selectors import rubric_weights
from tests.annotations.factories import CaseFactory, EvaluatedModelFactory, ModelResponseFactory

JUDGE_REASONING_MARKER = "ZQ-DELPHI-JUDGE-REASONING-5120"
# model name → raw score given to every sub-dimension, per dimension (the same for every case of it).
MODEL_SCORES = {
    "zqdelphi/model-alpha": {"textual": 3, "hermeneutical": 1, "doctrinal": 1, "historical": 2, "apologetics": 2,
                             "intertextual": 2},
    "zqdelphi/model-beta": {"textual": 1, "hermeneutical": 3, "doctrinal": 3, "historical": 2, "apologetics": 1,
                            "intertextual": 1},
    "zqdelphi/model-gamma": {"textual": 2, "hermeneutical": 2, "doctrinal": 2, "historical": 1, "apologetics": 3,
                             "intertextual": 3},
}


def judge_run_seed(*, rubric: RubricVersion, failed_model: str | None = None) -> JudgeRun:
    """One case per dimension and difficulty (hard, expert), one response per model, all scored by the judge."""
    weights = rubric_weights(rubric=rubric)
    models = [EvaluatedModelFactory(name=name, provider="ZqDelphiVendor", family=name.split("-")[-1])
              for name in MODEL_SCORES]
    for dimension in weights:
        for difficulty in ("hard", "expert"):
            case = CaseFactory(dimension=dimension, difficulty=difficulty)
            for model in models:
                ModelResponseFactory(test_case=case, model=model)
    run = judge_run_create(rubric=rubric, label="delphi test run", models=[m.name for m in models])
    outcomes = []
    for response in ModelResponse.objects.filter(model__in=models).select_related("test_case", "model"):
        dimension = response.test_case.dimension
        raw = MODEL_SCORES[response.model.name][dimension]
        subs = weights[dimension][1]
        if response.model.name == failed_model:
            result = ResultRecord(role=JudgeResult.Role.PRIMARY, judge_model="google/gemini-3-flash-preview",
                                  status=JudgeResult.Status.FAILED, error_class="server_error", attempts=3)
        else:
            result = ResultRecord(
                role=JudgeResult.Role.PRIMARY, judge_model="google/gemini-3-flash-preview",
                status=JudgeResult.Status.SCORED, attempts=1,
                composite=case_composite(raw_scores=dict.fromkeys(subs, raw), sub_weights=subs).quantize(
                    Decimal("0.000001")),
                scores=[ScoreRecord(key, raw, f"{JUDGE_REASONING_MARKER} {key}") for key in subs],
            )
        outcomes.append(ItemOutcome(response_id=response.pk, results=[result]))
    judge_results_store(run=run, outcomes=outcomes)
    judge_run_finish(run=run, status=JudgeRun.Status.FINISHED)
    return run


def model_names() -> list[str]:
    return list(EvaluatedModel.objects.filter(name__in=MODEL_SCORES).values_list("name", flat=True))
