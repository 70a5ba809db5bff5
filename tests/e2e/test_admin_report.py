"""In real Chromium: an admin signs in with password and a TOTP code, asks for a report version, watches the
background worker compute it, and reads the IRR report."""
from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-admin-1357"


def current_code(user) -> str:  # type: ignore[no-untyped-def]
    from accounts.totp import totp_current_code

    return totp_current_code(user=user)[0]


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_admin_signs_in_with_totp_and_reads_the_report(live_server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from calibration.demo import demo_totp_activate
    from tests.calibration.reports.test_report_views import scored_world

    world, run = scored_world()
    world.admin.set_password(PASSWORD)
    world.admin.save()
    assert world.admin.email in demo_totp_activate()

    page.set_viewport_size({"width": 1300, "height": 1000})
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/?next=/calibration/cycles/{world.cycle.pk}/report/")
    page.fill("input[name=login]", world.admin.email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
    page.fill("input[name=code]", current_code(world.admin))
    page.press("input[name=code]", "Enter")
    page.wait_for_url(re.compile(rf"/calibration/cycles/{world.cycle.pk}/report/$"))
    expect(page.locator("h1")).to_contain_text("IRR report")
    expect(page.locator("[data-testid=no-snapshot]")).to_be_visible()
    page.get_by_role("button", name="Compute version 1").click()
    progress = page.locator("[data-testid=snapshot-progress]")
    expect(progress).to_contain_text("No task worker is running")  # none in this test yet
    # The worker (the same command production runs) takes the queued task; the page, polling, reloads.
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("Version 1", timeout=20_000)
    expect(page.locator("[data-testid=experts-summary]")).to_contain_text("α =")
    expect(page.locator("[data-testid=judge-summary]")).to_contain_text("vs expert majority")
    assert page.locator("svg").count() >= 3  # two forest plots and the confusion matrices
    page.screenshot(path=str(ARTIFACTS / "irr-report.png"), full_page=False)
