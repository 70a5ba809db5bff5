"""The TheoBERT scorer on hand-computed cases: every pass condition, error class and critical failure."""
from __future__ import annotations

import json

import pytest

from evaluations.theobert.scoring import CaseSpec, Prediction, score_case
from evaluations.theobert.sources import PredictionError, PredictionsFile


def pred(*words: str, probs: dict[str, float] | None = None, case_id: str = "C1") -> Prediction:
    return Prediction(case_id=case_id, ranked=tuple((w, 0.5 / (i + 1)) for i, w in enumerate(words)),
                      probabilities=probs or {})


def topk(targets=("death",), k=5, **kw) -> CaseSpec:
    return CaseSpec(case_id="C1", pass_condition="target_in_top_k", k=k, targets=tuple(targets), **kw)


FILLER = ["sin", "cross", "blood", "church", "body", "sacrifice", "covenant", "temple", "altar", "kingdom",
          "priest", "prophet", "law", "gospel", "bread", "cup", "supper", "table", "feast", "passover",
          "lamb", "resurrection"]


def test_target_in_top_k_pass_and_mrr():
    v = score_case(topk(), pred("life", "Death", "return"))  # case-insensitive, rank 2
    assert v.passed and v.rank == 2 and v.mrr == pytest.approx(0.5) and v.error_class == ""
    v = score_case(topk(k=1), pred("life", "death"))
    assert not v.passed and v.mrr == 0.0 and v.rank == 2


def test_acceptable_alternative_counts_as_correct():
    case = topk(targets=("grace",), acceptable_alternatives=("mercy",))
    v = score_case(case, pred("sin", "mercy", "grace"))
    assert v.passed and v.rank == 2 and v.mrr == pytest.approx(0.5)


def test_near_miss_at_k_plus_one_and_k_plus_two():
    for rank in (6, 7):
        words = FILLER[: rank - 1] + ["death"]
        v = score_case(topk(), pred(*words))
        assert not v.passed and v.rank == rank and v.error_class == "near_miss"


def test_wrong_semantic_cluster_between_k_plus_3_and_20():
    words = FILLER[:11] + ["death"]  # rank 12, top words theological but wrong
    v = score_case(topk(), pred(*words))
    assert v.error_class == "wrong_semantic_cluster" and v.rank == 12


def test_total_miss_below_20_or_absent():
    v = score_case(topk(), pred(*(FILLER[:21] + ["death"])))  # rank 22
    assert v.rank == 22 and v.error_class == "total_miss"
    v = score_case(topk(), pred(*FILLER[:5]))
    assert v.rank is None and v.error_class == "total_miss"


def test_generic_over_theological():
    # top candidate generic: classified generic even though the target is ranked 12
    v = score_case(topk(), pred(*(["power"] + FILLER[:10] + ["death"])))
    assert v.error_class == "generic_over_theological"
    # most of the top 5 generic (3 of 5) while the first is not
    v = score_case(topk(), pred("sin", "love", "will", "plan", "cross"))
    assert v.error_class == "generic_over_theological"
    # the case's own failure examples count as generic for this case
    v = score_case(topk(failure_examples=("church",)), pred("church", "body", "sin", "temple", "altar"))
    assert v.error_class == "generic_over_theological"


def test_near_miss_wins_over_generic():
    v = score_case(topk(), pred("power", "love", "will", "plan", "god", "death"))
    assert v.error_class == "near_miss"


def test_critical_failure_in_top_three_pass_or_fail():
    case = topk(failure_examples=("church", "gospel"))
    v = score_case(case, pred("death", "gospel", "cross"))
    assert v.passed and v.critical_failure and v.critical_tokens == ("gospel",)
    v = score_case(case, pred("death", "cross", "sin", "gospel"))  # 4th place: not critical
    assert not v.critical_failure


def test_correct_beats_foil_margins_and_bands():
    case = CaseSpec(case_id="C1", pass_condition="correct_beats_foil", k=5, targets=("grace",), foils=("law",))
    for p_grace, p_law, passed, band in [(0.40, 0.20, True, "high"), (0.25, 0.20, True, "medium"),
                                         (0.21, 0.20, True, "low"), (0.30, 0.20 + 0.10, False, "low"),
                                         (0.10, 0.35, False, "low")]:
        v = score_case(case, pred("grace", "law", probs={"grace": p_grace, "law": p_law}))
        assert v.passed is passed and v.confidence == band
        assert v.margin == pytest.approx(p_grace - p_law)
    # boundary: margin exactly 0.10 is medium, exactly 0.02 is low
    assert score_case(case, pred("x", probs={"grace": 0.35, "law": 0.25})).confidence == "medium"
    assert score_case(case, pred("x", probs={"grace": 0.5, "law": 0.48})).confidence == "low"
    # a failed contrastive case is classified by the target's rank
    v = score_case(case, pred(*(FILLER[:5] + ["grace"]), probs={"grace": 0.01, "law": 0.2}))
    assert not v.passed and v.error_class == "near_miss"
    # probabilities may come from the ranked list itself
    v = score_case(case, Prediction("C1", (("grace", 0.6), ("law", 0.1))))
    assert v.passed and v.margin == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no probability for its foil"):
        score_case(case, Prediction("C1", (("grace", 0.6),)))


def test_all_top_k_in_target_set():
    case = CaseSpec(case_id="C1", pass_condition="all_top_k_in_target_set", k=5,
                    targets=("father", "son", "spirit"), acceptable_alternatives=("ghost",))
    v = score_case(case, pred("father", "son", "spirit", "ghost", "lord"))
    assert v.passed and v.share_in_set == pytest.approx(0.8)
    v = score_case(case, pred("father", "son", "lord", "god", "spirit"))
    assert not v.passed and v.share_in_set == pytest.approx(0.6)


def test_multi_piece_targets_are_whole_words():
    # a source decodes "pro ##pit ##iation" into "propitiation"; the scorer compares words
    case = topk(targets=("propitiation",))
    assert score_case(case, pred("atonement", "propitiation")).passed


def test_predictions_file_formats_and_errors(tmp_path):
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"model": "theo", "predictions": [
        {"id": "C1", "top": [{"token": "death", "prob": 0.6}, {"token": "life", "prob": 0.1}]},
        {"id": "C2", "top": [["grace", 0.4]], "probabilities": {"grace": 0.4, "law": 0.1}},
    ]}))
    source = PredictionsFile(ours)
    assert source.label == "theo" and source.by_case["C2"].probability("LAW") == 0.1
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"results": [
        {"id": "C1", "top_k": ["death", "life"]},
        {"case_id": "C2", "predictions": [{"token_str": "grace", "score": 0.4}], "target": "grace",
         "target_prob": 0.4, "foil": "law", "foil_prob": 0.2},
    ]}))
    source = PredictionsFile(suite)
    assert source.by_case["C1"].words() == ["death", "life"]
    assert source.by_case["C2"].probability("law") == 0.2
    bad = tmp_path / "bad.json"
    for document, message in [
        ("{", "not a JSON file"),
        (json.dumps({"x": 1}), "no list of predictions"),
        (json.dumps({"predictions": [{"top": []}]}), "entry 1: field 'id' is missing"),
        (json.dumps({"predictions": [{"id": "C1"}]}), r"entry 1 \(C1\): no ranked candidates"),
        (json.dumps({"predictions": [{"id": "C1", "top": [{"token": "a", "prob": 2}]}]}), "candidate 1: probability"),
        (json.dumps({"predictions": [{"id": "C1", "top": []}, {"id": "C1", "top": []}]}), "appears twice"),
    ]:
        bad.write_text(document)
        with pytest.raises(PredictionError, match=message):
            PredictionsFile(bad)
    source = PredictionsFile(ours)
    with pytest.raises(PredictionError, match="no prediction for case"):
        list(source.predict([topk(), CaseSpec("C9", "target_in_top_k", 5, ("x",))], top=5))
