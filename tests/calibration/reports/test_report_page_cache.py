"""The stored report page is rendered once per snapshot: a later view reads neither the payload nor re-renders."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.calibration.reports.test_report_views import compute, scored_world


@pytest.fixture
def scored(db, immediate_tasks):
    return scored_world()


def body(page) -> str:
    html = page.content.decode()
    return html[html.index('data-testid="report-contents"'):html.index('<div class="card" id="versions">')]


def test_a_second_view_shows_the_same_report_without_reading_the_payload(scored, client):
    world, _ = scored
    client.force_login(world.admin)
    first_version = compute(client, world.cycle, seed=1)
    url = reverse("calibration:report", args=[world.cycle.pk])
    first = client.get(url, {"version": 1})
    with CaptureQueriesContext(connection) as queries:
        again = client.get(url, {"version": 1})
    assert again.status_code == 200 and body(again) == body(first)
    assert "Experts among themselves" in body(again)
    assert not [q for q in queries.captured_queries if '"payload"' in q["sql"]]  # the body came from the cache
    assert again.context["report"].meta.seed == first_version.seed == 1  # the context still has the typed report

    compute(client, world.cycle, seed=2)  # a new version is a new cache entry, not version 1's body
    second = client.get(url)
    assert "seed 2" in second.content.decode() and body(second) != body(first)
