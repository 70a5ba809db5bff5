"""Multi-run averaging (issue 15 part 5): a series of repeated runs of one judge on the same responses — the report
uses the rounded mean of the runs' scores, its snapshot says which runs; the leaderboard shows each model's
run-to-run spread; judge_run --repeat makes a series over exactly the same responses."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from calibration.cycles.ratings import judge_scores_averaged, report_inputs
from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request
from evaluations.judge.selectors import judge_decisive_raw_scores, judge_run_series
from evaluations.models import JudgeRun
from tests.calibration.reports.test_judge_agreement import fake_run
from tests.calibration.reports.test_report_views import scored_world

pytestmark = pytest.mark.django_db


def series_world():  # type: ignore[no-untyped-def]
    """The scored cycle of the report tests, and three runs of one judge whose raw scores jitter."""
    world, _ = scored_world()
    JudgeRun.objects.all().delete()  # the world's own single run
    rng = np.random.default_rng(5)
    base: dict = {}

    def jittery(response_id: int, dimension: str, key: str) -> int:
        truth = base.setdefault((response_id, key), int(rng.integers(0, 4)))
        return int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 0, 3))

    first = fake_run(world.cycle.rubric, "judge-a", jittery)
    others = [fake_run(world.cycle.rubric, "judge-a", jittery) for _ in range(2)]
    JudgeRun.objects.filter(pk__in=[r.pk for r in others]).update(repeat_of=first)
    return world, first, [JudgeRun.objects.get(pk=r.pk) for r in others]


def test_the_report_averages_a_series_and_says_so() -> None:
    world, first, others = series_world()
    assert [r.pk for r in judge_run_series(run=others[1])] == [first.pk, *(r.pk for r in others)]
    raws = [judge_decisive_raw_scores(run=r) for r in (first, *others)]
    averaged = judge_scores_averaged(run=first, response_ids=raws[0])
    for (response_id, key), score in averaged.items():
        mean = sum(raw[response_id][key] for raw in raws) / 3
        assert score == math.floor(mean + 0.5)  # 1/3 → 0, 2/3 → 1, 4/3 → 1, 5/3 → 2, 7/3 → 2, 8/3 → 3
    assert any(score != raws[0][rid][key] for (rid, key), score in averaged.items())  # averaging changed something
    inputs = report_inputs(cycle=world.cycle, run=others[0])
    response_of = dict(world.cycle.items.values_list("id", "response_id"))
    for (item, key), score in inputs.judge.items():
        assert score == averaged[(response_of[int(item)], key)]
    snapshot = report_snapshot_compute(snapshot_id=report_snapshot_request(
        cycle=world.cycle, requested_by=None, run_id=first.pk, n_resamples=0).pk)
    assert snapshot.payload["meta"]["judge_runs_averaged"] == [first.pk, *(r.pk for r in others)]
    assert "averaged" in snapshot.payload["meta"]["judge_score_used"]


def test_the_leaderboard_shows_the_run_to_run_spread(client) -> None:  # type: ignore[no-untyped-def]
    world, first, _ = series_world()
    client.force_login(world.admin)
    html = client.get(reverse("judge:leaderboard") + f"?run={first.pk}").content.decode()
    assert "Run-to-run SD" in html and html.count('data-testid="run-spread"') >= 1
    single = fake_run(world.cycle.rubric, "judge-b", lambda r, d, k: 2)
    assert "Run-to-run SD" not in client.get(reverse("judge:leaderboard") + f"?run={single.pk}").content.decode()


def test_judge_run_repeat_makes_a_series_on_the_same_responses(tmp_path, rubric_v1, settings) -> None:  # type: ignore[no-untyped-def]
    from evaluations.judge.fake_server import FakeLLMServer
    from tests.evaluations.judge.conftest import import_benchmark

    import_benchmark(tmp_path, n_cases=6)
    out = io.StringIO()
    with FakeLLMServer() as server:
        call_command("judge_run", "--wait", "--repeat", "3", "--limit", "9", "--base-url", server.base_url,
                     stdout=out, stderr=io.StringIO())
    runs = list(JudgeRun.objects.order_by("id"))
    assert len(runs) == 3 and all(r.status == "finished" and r.processed_items == 9 for r in runs)
    assert runs[1].repeat_of == runs[0] and runs[2].repeat_of == runs[0]
    assert len({frozenset(judge_decisive_raw_scores(run=r)) for r in runs}) == 1  # the same responses
    assert "a series of 3 runs" in out.getvalue()
    checked = io.StringIO()
    call_command("judge_bias", "runs", "--series", str(runs[0].pk), "--resamples", "0", stdout=checked)
    assert "runs " + ", ".join(str(r.pk) for r in runs) in checked.getvalue()
