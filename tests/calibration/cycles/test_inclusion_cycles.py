"""Inclusion probabilities through the database (issue 22 items 3 and 5): the commit stores every item's π, basis and
stratum and the cycle's strategy; the data migration recomputes a legacy draw's probabilities from its report; the
cross-tradition sample records its own; the active design learns residual SDs from expert truths against the judge;
the draw form offers the strategy and the preview shows both expected half-widths."""
from __future__ import annotations

import importlib
from decimal import Decimal

import numpy as np
import pytest
from django.apps import apps
from django.urls import reverse

from annotations.models import Assignment, CalibrationCycle, CycleItem
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.cycles.active import Labelled, residual_sd_table
from calibration.cycles.sampling import STRATEGY_ACTIVE, DrawParams
from calibration.cycles.selectors import active_design, draw_pool, expert_truth_composites
from calibration.cycles.services import cycle_commit, cycle_draw_compute, cycle_items_mark_anchor
from calibration.cycles.truth import response_truths
from calibration.validation.tradition import cross_tradition_cycle_commit
from evaluations.judge.selectors import judge_decisive_scored
from evaluations.models import JudgeResult, JudgeRun, ModelResponse, RubricVersion
from tests.annotations.factories import world_build
from tests.calibration.cycles.test_cycles import pool_create
from tests.calibration.validation.test_tradition_fairness import cross_world

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotations.migrations.0010_cycle_items_recompute_inclusion_probabilities")


def recorded(cycle: CalibrationCycle) -> dict[int, tuple[float | None, str, list[str]]]:
    return {pk: (pi, basis, stratum) for pk, pi, basis, stratum in
            CycleItem.objects.filter(cycle=cycle).values_list("pk", "inclusion_probability", "inclusion_basis", "stratum")}


def test_inclusion_commit_stores_each_items_probability_basis_stratum_and_the_strategy() -> None:
    pool_create(per_dimension_cases=10, models=3)
    params = DrawParams(seed=9, min_per_dimension=12, strategy=STRATEGY_ACTIVE)
    preview = cycle_draw_compute(params=params)
    cycle, _ = cycle_commit(name="Active 1", params=params, expected_fingerprint=preview.fingerprint)
    assert cycle.draw_strategy == "active" and cycle.draw_report["strategy"] == "active"
    stored = {i.response_id: i for i in CycleItem.objects.filter(cycle=cycle)}
    assert len(stored) == len(preview.items)
    for item in preview.items:
        row = stored[item.response_id]
        assert row.inclusion_basis == item.inclusion_basis and row.stratum == list(item.stratum)
        assert row.inclusion_probability == item.inclusion_probability
    assert {r.inclusion_basis for r in stored.values()} >= {"drawn", "edge_case"}
    assert all((r.inclusion_probability is None) == (r.inclusion_basis == "edge_case") for r in stored.values())


def test_inclusion_migration_recomputes_a_legacy_draw_from_its_report() -> None:
    pool_create(per_dimension_cases=10, models=3)
    first, _ = cycle_commit(name="C1", params=DrawParams(seed=3, min_per_dimension=12))
    ids = sorted(CycleItem.objects.filter(cycle=first, response__test_case__dimension="doctrinal")
                 .values_list("response_id", flat=True))[:3]
    cycle_items_mark_anchor(cycle=first, response_ids=ids)
    second, _ = cycle_commit(name="C2", params=DrawParams(seed=4, min_per_dimension=12, edge_fraction=0.5),
                               previous=first)
    empty = CalibrationCycle.objects.create(name="No report", rubric=first.rubric, seed=1, draw_report={})
    CycleItem.objects.create(cycle=empty, response_id=ids[0], source="random")
    CycleItem.objects.create(cycle=empty, response_id=ids[1], source="edge_length")
    truth = {c.pk: recorded(c) for c in (first, second)}
    assert {basis for _, basis, _ in truth[second.pk].values()} == {"drawn", "carried", "edge_case"}
    # Back to what a draw made before this change stored: no probabilities, a report without the new columns.
    CycleItem.objects.update(inclusion_probability=None, inclusion_basis="unknown", stratum=[])
    for cycle in (first, second):
        report = cycle.draw_report
        report.pop("strategy")
        report["strata"] = [{k: row[k] for k in ("dimension", "difficulty", "tradition", "model", "pool", "drawn")}
                            for row in report["strata"]]
        CalibrationCycle.objects.filter(pk=cycle.pk).update(draw_report=report)

    migration.recompute(apps, None)

    for cycle in (first, second):
        for pk, (pi, basis, stratum) in recorded(cycle).items():
            true_pi, true_basis, true_stratum = truth[cycle.pk][pk]
            assert stratum == true_stratum, pk
            if true_basis == "edge_case":
                assert (pi, basis) == (None, "edge_case")
            else:  # the facets did not change and nothing left the pool: the recomputation is exact
                assert basis == "recomputed" and pi == pytest.approx(true_pi), (pk, pi, true_pi, true_basis)
    legacy = {i.source: (i.inclusion_probability, i.inclusion_basis) for i in CycleItem.objects.filter(cycle=empty)}
    assert legacy == {"random": (None, "unknown"), "edge_length": (None, "edge_case")}


def test_inclusion_legacy_probabilities_mark_inconsistent_counts_unknown() -> None:
    facets = ("doctrinal", "easy", "", "m")
    report = {"strata": [{"dimension": "doctrinal", "difficulty": "easy", "tradition": "", "model": "m",
                          "pool": 3, "drawn": 5}]}
    items = [(i, "random", False, facets) for i in range(1, 5)]  # 4 random items from an eligible pool of 3
    assert {basis for _, basis, _ in migration.legacy_probabilities(report, items, []).values()} == {"unknown"}
    carried = [(1, "carried", False, facets)]  # carried, but the previous cycle had no non-anchor to carry
    assert migration.legacy_probabilities(report, carried, [(True, facets)])[1] == (None, "unknown", ["doctrinal", "carried"])


def test_inclusion_cross_tradition_sample_records_picked_over_responses_per_dimension() -> None:
    cross_world()
    cycle = cross_tradition_cycle_commit(name="Cross", pairs={"orthodox": "catholic", "catholic": "orthodox"},
                                         per_tradition=5, seed=42)
    items = list(CycleItem.objects.filter(cycle=cycle).select_related("response__test_case__tradition"))
    assert {i.inclusion_basis for i in items} == {"cross"}
    for item in items:
        case = item.response.test_case
        same = [i for i in items if i.response.test_case.tradition_id == case.tradition_id
                and i.response.test_case.dimension == case.dimension]
        population = ModelResponse.objects.filter(
            test_case__tradition=case.tradition, test_case__dimension=case.dimension, test_case__is_active=True).count()
        assert item.inclusion_probability == pytest.approx(len(same) / population)
        assert item.stratum == ["cross", case.tradition.key, case.dimension]


def _judge_run(world, composites: dict[int, tuple[float, float]]) -> JudgeRun:  # type: ignore[no-untyped-def]
    run = JudgeRun.objects.create(rubric=RubricVersion.objects.get(version="1.0"), primary_model="j",
                                  base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED)
    for response_id, (primary, secondary) in composites.items():
        JudgeResult.objects.create(run=run, response_id=response_id, judge_model="j", role="primary", status="scored",
                                   composite=Decimal(str(primary)), attempts=1)
        JudgeResult.objects.create(run=run, response_id=response_id, judge_model="k", role="secondary",
                                   status="scored", composite=Decimal(str(secondary)), attempts=1)
    JudgeRun.objects.filter(pk=run.pk).update(total_items=len(composites), processed_items=len(composites),
                                              scored_items=len(composites))
    return run


def test_calibrated_active_design_learns_residuals_from_expert_truth_against_the_judge() -> None:
    world = world_build(catholic_cases=3)
    rng = np.random.default_rng(4)
    catholic = Assignment.objects.filter(cycle=world.cycle, panel=world.catholic).select_related("expert")
    for assignment in catholic:
        score = int(rng.integers(0, 4))
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), score), rationale="r"))
    truths = expert_truth_composites()
    labelled_ids = sorted({a.item.response_id for a in catholic})
    assert sorted(truths) == labelled_ids and all(0 <= v <= 1 for v in truths.values())
    # The same rule as the calibrated leaderboard's truth, over every cycle at once.
    assert truths == pytest.approx({rid: t.composite for rid, t in response_truths(cycle=world.cycle).items()})
    pool = draw_pool()
    judge = {rid: (round(0.1 + 0.1 * k, 3), round(0.3 + 0.05 * k, 3)) for k, rid in
             enumerate(sorted(p.response_id for p in pool))}
    run = _judge_run(world, judge)
    decisive = judge_decisive_scored(run=run, response_ids=list(judge))
    assert active_design(pool=pool, run=None, decisive={}).residuals.labels == 0
    assert active_design(pool=pool, run=run, decisive=decisive, with_uncertainty=False).uncertainty == {}
    design = active_design(pool=pool, run=run, decisive=decisive)
    facets = {p.response_id: p for p in pool}
    # The judge's value is its decisive composite (the secondary judge's where the run's rule picks it), and the
    # rows' order is the database's: compare up to float summation order.
    expected = residual_sd_table([Labelled(facets[r].dimension, facets[r].difficulty, facets[r].tradition,
                                           facets[r].model, truths[r], float(decisive[r].composite))
                                  for r in labelled_ids])
    assert design.residuals.labels == len(labelled_ids) == expected.labels
    assert design.residuals.lambdas == pytest.approx(expected.lambdas, abs=1e-12)
    assert design.residuals.dimensions.keys() == expected.dimensions.keys()
    for dimension, (sd, n) in expected.dimensions.items():
        assert design.residuals.dimensions[dimension] == (pytest.approx(sd, abs=1e-12), n)
    assert design.uncertainty == {rid: pytest.approx(abs(p - s)) for rid, (p, s) in judge.items()}
    assert "primary and secondary" in design.uncertainty_source


def test_calibrated_draw_form_offers_the_strategy_and_the_preview_shows_both_half_widths(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    client.force_login(world.admin)
    page = client.get(reverse("calibration:draw")).content.decode()
    assert 'name="strategy"' in page and 'value="proportional" selected' in page and 'value="active"' in page
    data = {"name": "Cycle two", "seed": "31337", "min_per_dimension": "50", "refresh_fraction": "0.25",
            "edge_fraction": "0.10", "strategy": "active", "action": "preview"}
    preview = client.post(reverse("calibration:draw"), data)
    html = preview.content.decode()
    assert preview.status_code == 200 and 'id="half-widths"' in html
    assert "<th class=\"num\">Proportional</th><th class=\"num\">Active</th>" in html
    rows = preview.context["half_widths"]
    assert {r.model for r in rows} == {m.name for m in world.models}
    for row in rows:
        assert row.proportional_label in html and row.active_label in html
        assert row.proportional_label[0] in "±—" and "%" in row.coverage_active_label
        assert f"{row.coverage_proportional_label} / {row.coverage_active_label}" in html
    assert preview.context["strategy"] == "active" and 'value="active" selected' in html
    # The fingerprint covers the strategy: committing the active preview as proportional is refused.
    refused = client.post(reverse("calibration:draw"), {**data, "action": "commit", "strategy": "proportional",
                                                        "fingerprint": preview.context["fingerprint"]})
    assert b"changed since the preview" in refused.content
    committed = client.post(reverse("calibration:draw"), {**data, "action": "commit",
                                                          "fingerprint": preview.context["fingerprint"]})
    assert committed.status_code == 302
    assert CalibrationCycle.objects.get(name="Cycle two").draw_strategy == "active"


def test_inclusion_cycle_page_shows_the_strategy_the_bases_and_warns_about_unknown_items(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    client.force_login(world.admin)
    url = reverse("calibration:cycle", args=[world.cycle.pk])
    html = client.get(url).content.decode()
    drawn = CycleItem.objects.filter(cycle=world.cycle, inclusion_basis="drawn").count()
    assert "Proportional (n per stratum" in html and f"{drawn} drawn at random" in html
    assert "no known inclusion probability" not in html
    admin_list = client.get(reverse("admin:annotations_cycleitem_changelist")).content.decode()
    assert "column-inclusion_probability" in admin_list and "By inclusion basis" in admin_list
    # A draw from before: no probabilities, a report without the new columns.
    CycleItem.objects.filter(cycle=world.cycle).update(inclusion_probability=None, inclusion_basis="unknown")
    report = world.cycle.draw_report
    report["dimensions"] = [{k: v for k, v in d.items() if k != "uncovered"} for d in report["dimensions"]]
    report["strata"] = [{k: v for k, v in r.items() if k not in ("random", "eligible", "sd", "sd_level")}
                        for r in report["strata"]]
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(draw_report=report)
    html = client.get(url).content.decode()
    total = CycleItem.objects.filter(cycle=world.cycle).count()
    assert f"{total} item(s) have no known inclusion probability" in html
    assert '<td class="num">—</td>' in html
