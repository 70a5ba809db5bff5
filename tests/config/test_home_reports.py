"""The home page lists the newest report versions of every kind: cycle, study and calibrated leaderboard."""
from __future__ import annotations

import pytest

from evaluations.models import JudgeRun
from evidence.models import Snapshot
from tests.annotations.factories import world_build


@pytest.mark.django_db
def test_the_admins_home_links_a_calibrated_leaderboard_version(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="m", fallback_model="f",
                                  base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED)
    Snapshot.objects.create(kind="calibrated", subject=str(run.pk), label_cycle=world.cycle, judge_run=run, version=1, seed=1, n_resamples=0)
    client.force_login(world.admin)
    response = client.get("/")  # was a 500: the list assumed every version belongs to a cycle or a study
    assert response.status_code == 200
    assert f'href="/calibrated/runs/{run.pk}/?version=1"' in response.content.decode()
