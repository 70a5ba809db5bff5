"""Weight sensitivity across runs (issue 15 part 6): the ± 5 % perturbations of every run of a series, and whether
the runs agree on the ranking at the proposed weights."""
from __future__ import annotations

from decimal import Decimal

import pytest

from delphi.rescoring import series_sensitivity
from evaluations.models import JudgeRun, ModelResponse
from evaluations.selectors import rubric_weights
from tests.calibration.reports.test_judge_agreement import fake_run
from tests.evaluations.judge.conftest import MODELS, import_benchmark

pytestmark = pytest.mark.django_db


def test_series_sensitivity_reports_every_run_and_whether_rankings_agree(tmp_path, rubric_v1) -> None:  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=24)
    model_of = dict(ModelResponse.objects.values_list("pk", "model__name"))
    level = {MODELS[0][0]: 3, MODELS[1][0]: 2, MODELS[2][0]: 1}
    steady = [fake_run(rubric_v1, "j", lambda r, d, k: level[model_of[r]]) for _ in range(3)]
    weights = rubric_weights(rubric=rubric_v1)
    dimension_weights = {d: w for d, (w, _) in weights.items()}
    sub_weights = {d: subs for d, (_, subs) in weights.items()}
    result = series_sensitivity(steady, new_dimension_weights=dimension_weights, new_sub_weights=sub_weights)
    assert result["runs"] == [r.pk for r in steady] and result["same_ranking_in_every_run"]
    assert result["perturbations"] == 3 * 12 and result["rank_changes"] == 0  # 6 dimensions × ±5, per run
    assert result["per_run"][0]["ranking"] == [MODELS[0][0], MODELS[1][0], MODELS[2][0]]
    swapped = fake_run(rubric_v1, "j", lambda r, d, k: {3: 1, 2: 2, 1: 3}[level[model_of[r]]])
    result = series_sensitivity([*steady, swapped], new_dimension_weights=dimension_weights,
                                new_sub_weights=sub_weights)
    assert not result["same_ranking_in_every_run"] and len(result["per_run"]) == 4
    assert dimension_weights and all(isinstance(w, Decimal) for w in dimension_weights.values())
    assert JudgeRun.objects.count() == 4
