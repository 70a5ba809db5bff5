"""Issue 32's trial-run rule on the calibrated leaderboard: a model with fewer judged responses than the minimum is
listed but never ranked nor paired; a run where no model reaches it is a trial — never the default board nor a
cycle's evidence, marked on its own page."""
from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from django.urls import reverse

from calibration.calibrated.build import InputRow, Options, calibrated_leaderboard_build
from calibration.calibrated.render import board_rows, interval_axis
from calibration.calibrated.selectors import calibrated_evidence_for_cycle
from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
from evaluations.models import JudgeResult, JudgeRun, ModelResponse
from evidence.models import Snapshot


def _rows(per_model: dict[str, int]) -> list[InputRow]:
    rows, rid = [], 0
    for m, count in per_model.items():
        for i in range(count):
            rid += 1
            value = 0.3 + 0.2 * list(per_model).index(m) + 0.01 * (i % 5)
            rows.append(InputRow(response_id=rid, model=m, family=m, dimension="doctrinal", tradition="none",
                                 difficulty="medium", judge=round(value + 0.05, 6), expert=round(value, 6),
                                 expert_gold=None, inclusion_probability=1.0, inclusion_basis="drawn", n_raters=2))
    return rows


def test_trial_run_calibrated_model_below_the_minimum_is_listed_never_ranked_nor_paired() -> None:
    report = calibrated_leaderboard_build(_rows({"big": 30, "other": 30, "thin": 4}),
                                          Options(n_resamples=20, min_cases=10))
    entries = {e.model: e for e in report.models}
    assert entries["thin"].calibrated.estimate is not None  # listed with its score…
    assert entries["thin"].rank_set is None  # …but not ranked
    assert entries["big"].rank_set is not None and entries["other"].rank_set is not None
    assert all("thin" not in (p.model_a, p.model_b) for p in report.pairs) and len(report.pairs) == 1
    assert report.meta.min_cases == 10 and report.meta.trial is False
    words = {r.model: r.rank_words for r in board_rows(report, interval_axis(report))}
    assert words["thin"] == "not ranked: too few cases for a rank (n = 4; needs at least 10)" and not words["big"]
    # the guardrail off (versions stored before it): the thin model was ranked and paired, as it was then
    before = calibrated_leaderboard_build(_rows({"big": 30, "other": 30, "thin": 4}), Options(n_resamples=20))
    assert {e.model: e.rank_set is not None for e in before.models}["thin"] and len(before.pairs) == 3
    assert before.meta.trial is None and "min_cases" not in before.to_json()["meta"]


def test_trial_run_calibrated_run_with_no_model_at_the_minimum_is_a_trial() -> None:
    report = calibrated_leaderboard_build(_rows({"a": 2, "b": 2, "c": 2, "d": 2}), Options(n_resamples=20, min_cases=10))
    assert report.meta.trial is True and report.pairs == [] and all(e.rank_set is None for e in report.models)


def _trial_run(world, full: JudgeRun) -> JudgeRun:  # type: ignore[no-untyped-def]
    """A newer finished run that judged one response per model (the "8-item test run" of issue 32)."""
    trial = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model=full.primary_model, label="smoke",
                                    fallback_model=full.fallback_model, base_url=full.base_url,
                                    status=JudgeRun.Status.FINISHED)
    first: dict[str, ModelResponse] = {}
    for result in JudgeResult.objects.filter(run=full).select_related("response__model").order_by("pk"):
        first.setdefault(result.response.model.name, result.response)
    for response in first.values():
        JudgeResult.objects.create(run=trial, response=response, judge_model=trial.primary_model, role="primary",
                                   status="scored", composite=Decimal("0.9"), attempts=1)
    JudgeRun.objects.filter(pk=trial.pk).update(scored_items=len(first), processed_items=len(first), total_items=len(first))
    trial.refresh_from_db()
    return trial


@pytest.mark.django_db
def test_trial_run_calibrated_is_never_the_default_board_nor_the_cycles_evidence(client, settings) -> None:
    from tests.calibration.calibrated.test_calibrated_leaderboard import judged_world

    world, full = judged_world()
    per_model = Counter(JudgeResult.objects.filter(run=full).values_list("response__model__name", flat=True))
    settings.FAITHBENCH_MIN_CASES_PER_MODEL = min(per_model.values())  # every model of the full run reaches it
    assert settings.FAITHBENCH_MIN_CASES_PER_MODEL >= 2
    JudgeRun.objects.filter(pk=full.pk).update(scored_items=sum(per_model.values()), processed_items=sum(per_model.values()),
                                                total_items=sum(per_model.values()))
    trial = _trial_run(world, full)
    for run in (full, trial):
        snapshot = calibrated_snapshot_request(run=run, cycle=world.cycle, requested_by=None, n_resamples=20)
        assert calibrated_snapshot_compute(snapshot_id=snapshot.pk).status == Snapshot.Status.READY
    stored = Snapshot.objects.of(Snapshot.Kind.CALIBRATED, trial.pk).get(version=1).payload
    assert stored["meta"]["trial"] is True and all(e["rank_set"] is None for e in stored["models"])
    assert Snapshot.objects.of(Snapshot.Kind.CALIBRATED, full.pk).get(version=1).payload["meta"]["trial"] is False

    client.force_login(world.admin)
    default = client.get(reverse("calibrated:index"))
    assert default.status_code == 302 and default["Location"] == reverse("calibrated:board", args=[full.pk])
    page = client.get(reverse("calibrated:board", args=[trial.pk])).content.decode()  # listed, chosen by id
    assert 'data-testid="trial-run"' in page
    assert f'value="{trial.pk}"' in client.get(reverse("calibrated:board", args=[full.pk])).content.decode()
    assert 'data-testid="trial-run"' not in client.get(reverse("calibrated:board", args=[full.pk])).content.decode()
    evidence = calibrated_evidence_for_cycle(cycle=world.cycle)  # the trial's version is newer, yet not the default
    assert evidence is not None and evidence.snapshot.judge_run_id == full.pk
