"""In real Chromium, the admin's judge jobs from their pages: start a judge run (form → confirmation with the
estimate → live progress), see it fail with the reason and the fix (no API key), retry it once the key is set, and
see it finish against the local fake endpoint; start a pairwise run; queue a validation check. The background
worker is the one production runs (`db_worker`, called here when the test wants the queue worked off)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from evaluations.judge.fake_server import FakeLLMServer
from tests.e2e.conftest import ARTIFACTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def work_off_the_queue() -> None:
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)


def sign_in(page: Any, live_server: Any, user: Any) -> None:
    """The browser carries the admin's session (signing in through the form is other tests' subject)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    page.context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])


def on_a_phone_nothing_scrolls_sideways(page: Any) -> None:
    from tests.e2e.a11y import horizontal_overflow

    size = page.viewport_size
    page.set_viewport_size({"width": 375, "height": 800})
    assert horizontal_overflow(page) == 0, page.url
    page.set_viewport_size(size)


@pytest.fixture
def admin(db: Any) -> Any:
    from tests.annotations.factories import person

    return person("admin", name="Judge Pages Admin")


@pytest.fixture
def endpoint(settings: Any) -> Iterator[FakeLLMServer]:
    """The local fake OpenAI-compatible endpoint, which (like a real one) refuses calls without its API key."""
    with FakeLLMServer(api_key="sk-e2e-fake") as server:
        settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_BASE_URL": server.base_url, "LLM_API_KEY": "",
                               "WRITE_FLUSH_SECONDS": 0.05, "RETRY_INITIAL_BACKOFF": 0.01}
        yield server


def test_judge_run_start_progress_failed_with_reason_then_retry(live_server, page, admin, endpoint, settings,
                                                                 tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from evaluations.models import JudgeRun
    from tests.evaluations.judge.conftest import import_benchmark

    import_benchmark(tmp_path, n_cases=5, models=[("openai/gpt-4o", "OpenAI", "gpt")])
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/judge/runs/")
    page.get_by_role("link", name="Start a judge run").click()
    expect(page.locator("h1")).to_have_text("Start a judge run")
    expect(page.locator("[data-testid=judge-endpoint]")).to_contain_text("no API key configured")
    page.get_by_label("openai/gpt-4o").check()
    page.get_by_label("Budget per run").fill("5")
    page.get_by_label("Label", exact=True).fill("e2e first run")
    page.get_by_role("button", name="Show the estimate").click()

    estimate = page.locator("[data-testid=judge-run-estimate]")
    expect(estimate).to_contain_text("5 items")
    expect(estimate).to_contain_text("calls")
    expect(estimate).to_contain_text("stops at its budget of 5.000000 USD")
    assert JudgeRun.objects.count() == 0  # the confirmation created nothing
    on_a_phone_nothing_scrolls_sideways(page)
    page.get_by_role("button", name="Start 1 run").click()

    page.wait_for_url(re.compile(r"/judge/runs/\d+/$"))
    run = JudgeRun.objects.get()
    outcome = page.locator("[data-testid=run-outcome]")
    expect(outcome).to_contain_text("Queued — waiting for a worker")
    expect(page.locator("[data-testid=run-waiting]")).to_contain_text("manage.py run_worker")
    expect(page.locator("[data-testid=worker-notice]")).to_contain_text("No task worker is running")  # none here
    work_off_the_queue()  # the page polls: the outcome changes without a reload
    expect(outcome).to_contain_text("Failed — 0 of 5 scored, 5 pending", timeout=15_000)
    expect(page.locator("[data-testid=run-waiting]")).to_have_count(0)  # the queued notice does not stay
    expect(page.locator("[data-testid=run-reason]")).to_contain_text(
        "No API key is configured (FAITHBENCH_LLM_API_KEY is empty)")
    expect(page.locator("[data-testid=run-fix]")).to_contain_text("Set FAITHBENCH_LLM_API_KEY")
    page.screenshot(path=str(ARTIFACTS / "judge-run-failed.png"), full_page=True)
    on_a_phone_nothing_scrolls_sideways(page)

    settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_API_KEY": "sk-e2e-fake"}  # the admin sets the key
    page.get_by_role("button", name=re.compile(r"^Retry: send the 5 items")).click()
    expect(outcome).to_contain_text("Queued")
    work_off_the_queue()
    expect(outcome).to_contain_text("Finished — 5 of 5 scored", timeout=15_000)
    expect(page.locator("[data-testid=run-errors]")).to_have_text("none")  # the 401s were never stored
    run.refresh_from_db()
    assert run.status == "finished" and run.scored_items == 5 and run.label == "e2e first run"
    page.get_by_role("link", name="← Judge runs").click()
    expect(page.locator("table")).to_contain_text("Finished — 5 of 5 scored")


def test_pairwise_run_start_from_the_validation_page(live_server, page, admin, endpoint, settings,
                                                     tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from calibration.validation.store import bias_checks
    from evaluations.models import PairwiseRun
    from tests.evaluations.judge.conftest import import_benchmark

    settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_API_KEY": "sk-e2e-fake"}
    settings.FAITHBENCH_MIN_CASES_PER_MODEL = 3  # 3 pairs make a check, not a trial (issue 32's rule, default 10)
    import_benchmark(tmp_path, n_cases=3, models=[("a/one", "A", "one"), ("b/two", "B", "two")])  # 3 pairs
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/calibration/validation/")
    page.locator("[data-testid=check-run-position]").get_by_role("link", name="Start a pairwise run").click()
    expect(page.locator("h1")).to_contain_text("Start a pairwise run")
    page.get_by_label("Judge model").fill("judge/pairwise-e2e")
    page.get_by_role("button", name="Show the estimate").click()
    expect(page.locator("[data-testid=pairwise-estimate]")).to_contain_text("3 pairs")
    expect(page.locator("[data-testid=pairwise-estimate]")).to_contain_text("6 calls")
    page.get_by_role("button", name="Start the pairwise run").click()
    page.wait_for_url(re.compile(r"/calibration/validation/pairwise/\d+/$"))
    outcome = page.locator("[data-testid=pairwise-outcome]")
    expect(outcome).to_contain_text("Queued — waiting for a worker")
    work_off_the_queue()
    expect(outcome).to_contain_text("Finished — 6 of 6 calls with a verdict", timeout=15_000)
    expect(page.locator("[data-testid=pairwise-check]")).to_contain_text("Position check")
    run = PairwiseRun.objects.get()
    assert run.model == "judge/pairwise-e2e" and bias_checks().filter(summary__check="position", pairwise_run=run).exists()
    page.get_by_role("link", name="validation status", exact=True).click()
    expect(page.locator("[data-testid=validation-checks]")).not_to_contain_text("Position bias (§6.2.1) not run")


def test_validation_check_run_from_its_row(live_server, page, settings) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from calibration.validation.store import bias_checks
    from tests.calibration.reports.test_report_views import scored_world

    world, run = scored_world()
    sign_in(page, live_server, world.admin)
    page.goto(f"{live_server.url}/calibration/validation/")
    row = page.locator("[data-testid=validation-checks] tr", has_text="Verbosity (§6.2.2)")
    expect(row).to_contain_text("not run")
    cell = page.locator("[data-testid=check-run-verbosity]")
    cell.get_by_role("button", name="Queue the check").click()  # nothing chosen: the row says what it needs
    expect(page.locator("[data-testid=check-run-verbosity]")).to_contain_text("choose one finished judge run")
    cell = page.locator("[data-testid=check-run-verbosity]")
    cell.get_by_label("Judge run").select_option(str(run.pk))
    cell.get_by_role("button", name="Queue the check").click()
    expect(page.locator(".messages")).to_contain_text("queued for the worker")
    work_off_the_queue()
    page.reload()
    row = page.locator("[data-testid=validation-checks] tr", has_text="Verbosity (§6.2.2)")
    expect(row).not_to_contain_text("not run")
    check = bias_checks().get(summary__check="verbosity")
    expect(row).to_contain_text("failed" if check.flagged else "passed")
    assert check.judge_run_id == run.pk and check.requested_by_id == world.admin.pk
