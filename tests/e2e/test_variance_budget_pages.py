"""In real Chromium at 375 px: the variance budget page and the scores-over-time page, axe clean (serious and
critical), nothing scrolling sideways, the charts drawn (issue 26 items 3–4)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.test import Client

from tests.e2e.a11y import BLOCKING, axe_violations, describe, horizontal_overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _world() -> tuple[Any, Any]:
    from annotations.models import CalibrationCycle
    from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request
    from evaluations.models import GenerationCondition, RubricVersion
    from tests.annotations.factories import CaseFactory, EvaluatedModelFactory, ModelResponseFactory, person
    from tests.calibration.calibrated.test_variance_budget_pages import judge_score_add, run_finished

    rubric = RubricVersion.objects.get(version="1.0")
    standard = GenerationCondition.objects.standard()
    route_b = GenerationCondition.objects.create(
        name="route-b", route="provider-b", temperature=standard.temperature, max_tokens=standard.max_tokens,
        system_prompt=standard.system_prompt, language=standard.language)
    first = run_finished(rubric)
    second = run_finished(rubric, repeat_of=first, finished_minutes=5)
    rng = np.random.default_rng(3)
    cases = [CaseFactory() for _ in range(10)]  # the trial-run rule (issue 32) plots models with ≥ 10 cases
    for name in ("vendor/alpha-model-with-a-long-name", "vendor/beta"):
        model = EvaluatedModelFactory(name=name)
        for c, case in enumerate(cases):
            for condition in (standard, route_b):
                for rep in (1, 2):
                    response = ModelResponseFactory(test_case=case, model=model, condition=condition, repetition=rep)
                    for run in (first, second):
                        judge_score_add(run, response, float(np.clip(0.4 + 0.05 * c + rng.normal(0, 0.05), 0, 1)))
    # the budget page shows what a calibrated version stored (here one on a cycle without labels yet)
    cycle = CalibrationCycle.objects.create(name="No labels yet", rubric=rubric, seed=1)
    calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=first, cycle=cycle, requested_by=None, n_resamples=20).pk)
    return first, person("admin", name="Budget Pages Admin")


def test_variance_budget_and_history_pages_on_a_phone_are_axe_clean(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    run, admin = _world()
    client = Client()
    client.force_login(admin)
    context = browser.new_context(viewport={"width": 375, "height": 900}, bypass_csp=True)  # axe is injected
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    for path, marker in ((f"/calibrated/runs/{run.pk}/variance-budget/", "svg.budget-bar"),
                         ("/calibrated/history/", "svg.history-chart")):
        page.goto(f"{live_server.url}{path}")
        assert page.locator(marker).count() == 2, path
        blocking = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
        assert blocking == [], f"{path}: {describe(blocking)}"
        assert horizontal_overflow(page) == 0, path
    context.close()
