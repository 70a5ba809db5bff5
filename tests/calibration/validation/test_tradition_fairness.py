"""Tradition fairness (issue 15 part 3): a cross-tradition cycle gives a tradition's sample to its own panel and,
blind, to another tradition's panel (reproducibly from the seed); out-group experts who score half a point and more
below the in-group are flagged, fair ones are not; the judge's per-tradition gap is read from the newest report."""
from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotations.models import Assignment, CycleItem
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.validation.store import bias_checks
from calibration.validation.tradition import cross_tradition_cycle_commit, tradition_fairness
from tests.annotations.factories import CaseFactory, ModelResponseFactory, person, tradition, world_build

pytestmark = pytest.mark.django_db


def cross_world():  # type: ignore[no-untyped-def]
    world = world_build(catholic_cases=12)
    orthodox = tradition("orthodox")
    for i in range(12):  # more Orthodox cases, public ones, over two dimensions
        case = CaseFactory(tradition=orthodox, dimension="doctrinal" if i % 2 else "historical")
        for model in world.models:
            ModelResponseFactory(test_case=case, model=model)
    return world


def score_all(cycle, *, out_group_shift: float, seed: int = 1) -> None:  # type: ignore[no-untyped-def]
    """Every expert scores their queue: quality per item, out-group experts of the Catholic items shifted."""
    rng = np.random.default_rng(seed)
    quality: dict[int, float] = {}
    for assignment in Assignment.objects.filter(cycle=cycle).select_related(
            "panel__tradition", "item__response__test_case__tradition", "expert").order_by("id"):
        q = quality.setdefault(assignment.item_id, float(rng.uniform(0.8, 2.2)))
        scored = assignment.item.response.test_case.tradition.key
        shift = out_group_shift if assignment.panel.tradition.key != scored and scored == "catholic" else 0.0
        scores = {k: int(np.clip(round(q + shift + rng.normal(scale=0.3)), 0, 3))
                  for k in sub_dimension_keys(assignment=assignment)}
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(scores=scores,
                                                                                               rationale="seen"))


def test_the_cycle_gives_each_sample_to_both_panels_reproducibly() -> None:
    world = cross_world()
    cycle = cross_tradition_cycle_commit(name="Cross 1", pairs={"orthodox": "catholic", "catholic": "orthodox"},
                                         per_tradition=8, seed=42)
    items = CycleItem.objects.filter(cycle=cycle).select_related("response__test_case__tradition")
    assert items.count() == 16 and {i.source for i in items} == {"cross"}
    catholic_items = [i for i in items if i.response.test_case.tradition.key == "catholic"]
    dims = {i.response.test_case.dimension for i in items if i.response.test_case.tradition.key == "orthodox"}
    assert len(catholic_items) == 8 and dims == {"doctrinal", "historical"}  # spread over the dimensions
    for item in catholic_items:
        panels = set(Assignment.objects.filter(item=item).values_list("panel__tradition__key", flat=True))
        assert panels == {"catholic", "orthodox"}
    again = cross_tradition_cycle_commit(name="Cross 2", pairs={"orthodox": "catholic", "catholic": "orthodox"},
                                         per_tradition=8, seed=42)
    assert sorted(CycleItem.objects.filter(cycle=again).values_list("response_id", flat=True)) == \
        sorted(i.response_id for i in items)  # the same seed draws the same sample
    with pytest.raises(ValidationError, match="own out-group"):
        cross_tradition_cycle_commit(name="Bad", pairs={"catholic": "catholic"}, per_tradition=4, seed=1)
    with pytest.raises(ValidationError, match="no panel of this tradition"):
        cross_tradition_cycle_commit(name="Bad", pairs={"reformed": "catholic"}, per_tradition=4, seed=1)
    assert world.cycle.kind == "standard"


@pytest.mark.parametrize(("shift", "flagged"), [(-0.9, True), (0.0, False)])
def test_an_out_group_that_scores_lower_is_flagged_and_a_fair_one_is_not(shift: float, flagged: bool) -> None:
    cross_world()
    cycle = cross_tradition_cycle_commit(name="Cross", pairs={"orthodox": "catholic", "catholic": "orthodox"},
                                         per_tradition=12, seed=3)
    score_all(cycle, out_group_shift=shift)
    result = tradition_fairness(cycle=cycle)
    catholic = next(g for g in result["groups"] if g["scored"] == "catholic" and g["dimension"] == "all dimensions")
    orthodox = next(g for g in result["groups"] if g["scored"] == "orthodox" and g["dimension"] == "all dimensions")
    assert catholic["scoring"] == "orthodox" and catholic["n_items"] == 12
    assert result["flagged"] is flagged and catholic["flagged"] is flagged
    assert (catholic["mean_difference"] < -0.5) is flagged
    assert not orthodox["flagged"] and abs(orthodox["mean_difference"]) < 0.5
    assert result["judge_gap"] is None  # no report of a standard cycle yet


def test_the_command_and_the_check() -> None:
    cross_world()
    out = io.StringIO()
    call_command("cross_tradition_cycle", "--name", "Cmd cross", "--pair", "orthodox:catholic", "--per-tradition", "6",
                 "--seed", "9", stdout=out)
    assert "6 items" in out.getvalue()
    from annotations.models import CalibrationCycle

    cycle = CalibrationCycle.objects.get(name="Cmd cross")
    score_all(cycle, out_group_shift=-1.2)
    checked = io.StringIO()
    call_command("judge_bias", "tradition", "--cycle", str(cycle.pk), stdout=checked)
    assert "FLAGGED" in checked.getvalue()
    check = bias_checks().get()
    assert check.check_kind == "tradition" and check.flagged and check.cycle == cycle and check.judge_run is None
    with pytest.raises(CommandError, match="cross-tradition"):
        call_command("judge_bias", "tradition", "--cycle", str(CalibrationCycle.objects.get(name="Test cycle").pk))
    with pytest.raises(CommandError, match="SCORING:SCORED"):
        call_command("cross_tradition_cycle", "--name", "x", "--pair", "catholic")
    person()  # the factories stay importable for the next test module


@pytest.mark.parametrize(("shift", "flagged"), [(-1, True), (0, False)])
def test_a_judge_that_scores_one_tradition_lower_is_flagged(shift: int, flagged: bool, immediate_tasks) -> None:  # type: ignore[no-untyped-def]
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
    from calibration.validation.tradition import judge_tradition_gap
    from evaluations.models import JudgeScore
    from tests.calibration.reports.test_report_views import scored_world

    world, run = scored_world()
    from annotations.models import SubScore
    from calibration.cycles.ratings import majority

    given: dict = {}
    for response_id, key, score in SubScore.objects.filter(annotation__assignment__cycle=world.cycle).values_list(
            "annotation__assignment__item__response_id", "key", "score"):
        given.setdefault((response_id, key), []).append(score)
    for judged in JudgeScore.objects.filter(result__run=run).select_related("result__response__test_case__tradition"):
        agreeing = majority(given[(judged.result.response_id, judged.sub_dimension)])  # the judge agrees …
        tradition_key = judged.result.response.test_case.tradition.key if judged.result.response.test_case.tradition else ""
        judged.raw_score = max(0, agreeing + shift) if tradition_key == "catholic" else agreeing  # … but for one
        judged.save(update_fields=["raw_score"])
    report_snapshot_compute(snapshot_id=report_snapshot_request(cycle=world.cycle, requested_by=None,
                                                                n_resamples=0).pk)
    gap = judge_tradition_gap()
    catholic = gap["traditions"]["catholic"]
    assert gap["flagged"] is flagged and catholic["flagged"] is flagged
    if flagged:
        assert catholic["difference_to_other_traditions"] < -0.5
    else:
        assert catholic["difference_to_other_traditions"] == pytest.approx(0.0, abs=1e-12)
