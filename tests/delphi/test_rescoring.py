"""Re-scoring judge composites under new weights: arithmetic by hand, Kendall's τ, sensitivity, no-data message."""
from __future__ import annotations

from decimal import Decimal

import pytest

from delphi.models import DelphiStudy
from delphi.rescoring import JudgedItem, judged_items, model_dimension_scores, rescoring_compare
from delphi.services import delphi_proposal_approve, delphi_response_submit, delphi_study_close
from evaluations.models import JudgeRun
from tests.delphi.factories import allocation, close
from tests.delphi.judge_data import MODEL_SCORES, judge_run_seed

D = Decimal
SUBS = {"d1": {"s": D(100)}, "d2": {"s": D(100)}}


def item(model: str, dimension: str, raw: int, weight: str = "2.0") -> JudgedItem:
    return JudgedItem(model=model, dimension=dimension, difficulty_weight=D(weight), raw_scores={"s": raw})


def test_model_dimension_scores_are_difficulty_weighted_means_of_composites() -> None:
    items = [item("A", "d1", 3, "2.0"), item("A", "d1", 0, "3.0"), item("A", "d2", 3),
             item("B", "d1", 1), item("B", "d2", 2),
             JudgedItem("B", "d2", D("1.0"), {"other": 3}),  # incomplete: skipped
             item("C", "d1", 3)]  # C has no d2 item: d2 is left out for everyone
    scores = model_dimension_scores(items, SUBS)
    assert scores.models == ["A", "B", "C"] and scores.dimensions == ["d1"] and scores.left_out == ["d2"]
    # A on d1: (1.0 × 2 + 0 × 3) / 5 = 0.4
    assert scores.matrix[:, 0] == pytest.approx([0.4, 1 / 3, 1.0])
    assert (scores.items_used, scores.items_skipped) == (6, 1)


def test_kendall_tau_is_minus_one_when_new_weights_reverse_two_models() -> None:
    items = [item("A", "d1", 3), item("A", "d2", 0), item("B", "d1", 1), item("B", "d2", 2)]
    # Old 80/20: A = .8, B = (.333×80 + .667×20)/100 = .4 → A first. New 20/80: A = .2, B = .6 → B first.
    report = rescoring_compare(items, old_dimension_weights={"d1": D(80), "d2": D(20)}, old_sub_weights=SUBS,
                               new_dimension_weights={"d1": D(20), "d2": D(80)}, new_sub_weights=SUBS)
    assert report["available"] and report["kendall_tau"] == -1.0 and report["rank_changed"]
    rows = {m["model"]: m for m in report["models"]}
    assert rows["A"]["old_score"] == pytest.approx(0.8) and rows["A"]["new_score"] == pytest.approx(0.2)
    assert (rows["A"]["old_rank"], rows["A"]["new_rank"], rows["B"]["new_rank"]) == (1, 2, 1)
    # ±5 around 20/80: 25/75 → A .25, B .583; 15/85 → A .15; 80±5 likewise: B stays first in all four.
    sensitivity = report["sensitivity"]
    assert sensitivity["perturbations"] == 4 and sensitivity["rank_changes"] == 0
    assert [d["dimension"] for d in sensitivity["details"]] == ["d1", "d1", "d2", "d2"]


def test_identical_weights_keep_the_ranking() -> None:
    items = [item("A", "d1", 3), item("A", "d2", 0), item("B", "d1", 1), item("B", "d2", 2), item("C", "d1", 2),
             item("C", "d2", 2)]
    weights = {"d1": D(50), "d2": D(50)}
    report = rescoring_compare(items, old_dimension_weights=weights, old_sub_weights=SUBS,
                               new_dimension_weights=weights, new_sub_weights=SUBS)
    assert report["kendall_tau"] == 1.0 and not report["rank_changed"]


def test_no_items_is_reported_not_raised() -> None:
    report = rescoring_compare([], old_dimension_weights={}, old_sub_weights={}, new_dimension_weights={},
                               new_sub_weights={})
    assert report == {"available": False, "reason": report["reason"]} and "No judge scores" in report["reason"]


@pytest.mark.django_db
def test_judged_items_take_the_decisive_scored_result_and_exclude_failures(rubric_v1) -> None:  # type: ignore[no-untyped-def]
    run = judge_run_seed(rubric=rubric_v1, failed_model="zqdelphi/model-gamma")
    items = judged_items(run=run)
    assert len(items) == 2 * 12  # two models × six dimensions × two difficulties; gamma failed everywhere
    assert {i.model for i in items} == {"zqdelphi/model-alpha", "zqdelphi/model-beta"}
    assert {i.difficulty_weight for i in items} == {D("2.0"), D("3.0")}
    alpha_textual = next(i for i in items if i.model == "zqdelphi/model-alpha" and i.dimension == "textual")
    assert alpha_textual.raw_scores == dict.fromkeys(
        ["lexicalAccuracy", "translationFidelity", "linguisticReasoning", "sourceHandling"], 3)


@pytest.mark.django_db
def test_approval_rescores_the_judge_composites_under_the_new_rubric(dworld) -> None:  # type: ignore[no-untyped-def]
    run = judge_run_seed(rubric=dworld.rubric)
    assert run.status == JudgeRun.Status.FINISHED
    # The panel moves weight from textual (alpha's strength) to hermeneutical (beta's strength).
    for user in dworld.panelists:
        delphi_response_submit(round=dworld.round(1), expert=user, allocation=allocation(dworld.structure, shift=-15))
    close(dworld.round(1), dworld)
    study = delphi_proposal_approve(study=delphi_study_close(study=dworld.study), actor=dworld.admin)
    assert study.status == DelphiStudy.Status.APPROVED
    report = study.rescoring
    assert report["available"] and report["run"]["id"] == run.pk
    assert report["items_used"] == 3 * 12 and report["items_skipped"] == 0
    assert report["dimensions_used"] == ["textual", "hermeneutical", "doctrinal", "historical", "apologetics",
                                         "intertextual"]
    # Every sub-dimension has the same raw score, so a case composite is raw/3 whatever the sub-weights;
    # only the dimension weights (25/20/20/15/10/10 → 10/35/20/15/10/10) move the models.
    scores = {m["model"]: m for m in report["models"]}
    alpha = MODEL_SCORES["zqdelphi/model-alpha"]
    old_alpha = sum(w * alpha[d] / 3 for d, w in zip(report["dimensions_used"], [25, 20, 20, 15, 10, 10],
                                                     strict=True)) / 100
    new_alpha = sum(w * alpha[d] / 3 for d, w in zip(report["dimensions_used"], [10, 35, 20, 15, 10, 10],
                                                     strict=True)) / 100
    assert scores["zqdelphi/model-alpha"]["old_score"] == pytest.approx(old_alpha, abs=1e-6)
    assert scores["zqdelphi/model-alpha"]["new_score"] == pytest.approx(new_alpha, abs=1e-6)
    # By hand (Σ w × raw / 300): old alpha 185, beta 195, gamma 205 → gamma, beta, alpha;
    # new alpha 155, beta 225, gamma 205 → beta, gamma, alpha. One discordant pair of three: τ = 1/3.
    assert [m["model"] for m in report["models"]] == ["zqdelphi/model-beta", "zqdelphi/model-gamma",
                                                      "zqdelphi/model-alpha"]
    assert [m["old_rank"] for m in report["models"]] == [2, 1, 3]
    assert report["kendall_tau"] == pytest.approx(1 / 3) and report["rank_changed"]
    assert report["sensitivity"]["perturbations"] == 12
    assert 0 <= report["sensitivity"]["rank_changes"] <= 12
