"""In real Chromium: an admin signs in with password and a TOTP code, and reads a cycle's IRR report."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from evaluations.services import reference_data_ensure

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
ARTIFACTS = Path(__file__).parent / "artifacts"
PASSWORD = "pw-e2e-admin-1357"


def current_code(user) -> str:  # type: ignore[no-untyped-def]
    from allauth.mfa import app_settings
    from allauth.mfa.models import Authenticator
    from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value
    from allauth.mfa.utils import decrypt

    secret = decrypt(Authenticator.objects.get(user=user, type=Authenticator.Type.TOTP).data["secret"])
    return format_hotp_value(hotp_value(secret, int(time.time()) // app_settings.TOTP_PERIOD))


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_admin_signs_in_with_totp_and_reads_the_report(live_server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's Chromium is missing at {CHROMIUM}: run `apt-get update && apt-get install -y chromium`.")
    from playwright.sync_api import expect, sync_playwright

    from calibration.demo import demo_totp_activate
    from tests.calibration.test_report_views import scored_world

    reference_data_ensure()
    world, run = scored_world()
    world.admin.set_password(PASSWORD)
    world.admin.save()
    assert world.admin.email in demo_totp_activate()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.set_default_timeout(15_000)
        try:
            page.goto(f"{live_server.url}/accounts/login/?next=/calibration/cycles/{world.cycle.pk}/report/")
            page.fill("input[name=login]", world.admin.email)
            page.fill("input[name=password]", PASSWORD)
            page.press("input[name=password]", "Enter")
            page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
            page.fill("input[name=code]", current_code(world.admin))
            page.press("input[name=code]", "Enter")
            page.wait_for_url(re.compile(rf"/calibration/cycles/{world.cycle.pk}/report/$"))
            expect(page.locator("h1")).to_contain_text("IRR report")
            expect(page.locator("[data-testid=experts-summary]")).to_contain_text("α =")
            expect(page.locator("[data-testid=judge-summary]")).to_contain_text("vs expert majority")
            assert page.locator("svg").count() >= 3  # two forest plots and the confusion matrices
            page.screenshot(path=str(ARTIFACTS / "irr-report.png"), full_page=False)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "irr-report-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
