"""In real Chromium at 375 px: the condition page (leaderboard per generation condition, paired deltas, forest plot)
on the demo's conditions, as a panel lead — axe-clean (no serious or critical violation) and nothing scrolls
sideways. Also checks the demo's conditions: every table and the chart have something to show."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.e2e.a11y import BLOCKING, axe_violations, describe, horizontal_overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_condition_delta_page_is_axe_clean_and_fits_a_phone(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from accounts.models import User
    from annotations.models import Panel
    from evaluations.demo import CONDITION_PLAN, demo_benchmark_load, demo_conditions_create
    from tests.annotations.factories import person

    demo_benchmark_load()
    run = demo_conditions_create(n_cases=12)
    assert run is not None and run.status == "finished" and run.scored_items == run.total_items == 12 * sum(
        reps for _, _, reps in CONDITION_PLAN)  # 4 + 1 + 1 + 1 + 4 answers per case
    lead = person(User.Role.EXPERT, email="lead.conditions@example.org")
    Panel.objects.create(name="Conditions panel", lead=lead)
    client = Client()
    client.force_login(lead)
    context = browser.new_context(viewport={"width": 375, "height": 800}, bypass_csp=True)  # axe is injected
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/judge/conditions/")
        assert page.locator("[data-testid=condition-board]").count() == 3  # standard, reasoning, route
        assert page.locator("[data-testid=delta-table] tbody tr").count() == 3  # reasoning × 2 models, route × 1
        assert page.locator("#delta-plot svg").count() == 1
        blocking = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
        assert not blocking, describe(blocking)
        assert horizontal_overflow(page) == 0
    finally:
        context.close()
