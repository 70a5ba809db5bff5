"""In real Chromium: an admin opens an imported rating study, has a judge score it, asks for a report version,
watches the worker compute both, reads the report (judge confusion matrix included) and downloads the bundle."""
from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.core.management import call_command

from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-study-2468"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_admin_judges_a_study_and_reads_its_report(live_server, page, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from accounts.totp import totp_current_code
    from calibration.demo import demo_totp_activate
    from calibration.models import Study
    from calibration.studies.importing import study_import
    from evaluations.judge.fake_server import FakeLLMServer
    from tests.annotations.factories import person
    from tests.calibration.studies.test_study_judging import judge_bench_file

    study_import(path=judge_bench_file(tmp_path / "mini.json", n=30), study="Mini JUDGE-BENCH — λόγος",
                 fmt="judge-bench")
    study = Study.objects.get()
    admin = person("admin", name="Study E2E Admin")
    admin.set_password(PASSWORD)
    admin.save()
    assert admin.email in demo_totp_activate()

    page.set_viewport_size({"width": 1300, "height": 1000})
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/?next=/calibration/studies/")
    page.fill("input[name=login]", admin.email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
    page.fill("input[name=code]", totp_current_code(user=admin)[0])
    page.press("input[name=code]", "Enter")
    page.wait_for_url(re.compile(r"/calibration/studies/$"))
    page.get_by_role("link", name="Mini JUDGE-BENCH — λόγος").click()
    expect(page.locator("[data-testid=no-snapshot]")).to_be_visible()

    with FakeLLMServer() as server:
        settings.FAITHBENCH = {**getattr(settings, "FAITHBENCH", {}), "LLM_BASE_URL": server.base_url}
        page.locator("summary", has_text="Start a judge run").click()
        page.fill("input[name=model]", "e2e-judge")
        page.get_by_role("button", name="Start").click()
        expect(page.locator("[data-testid=judge-runs]")).to_contain_text("Queued")
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    page.reload()
    expect(page.locator("[data-testid=judge-runs]")).to_contain_text("Finished")
    expect(page.locator("[data-testid=judge-runs]")).to_contain_text("60")  # 30 items × 2 dimensions

    page.get_by_role("button", name="Compute version 1").click()
    expect(page.locator("[data-testid=snapshot-progress]")).to_contain_text("No task worker is running")  # none in this test yet
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    expect(page.locator("[data-testid=snapshot-line]")).to_contain_text("Version 1", timeout=20_000)
    expect(page.locator("[data-testid=dimension]")).to_have_count(2)
    expect(page.locator("[data-testid=confusion]")).to_have_count(2)
    expect(page.locator("[data-testid=dimension]").first).to_contain_text("Krippendorff's α")
    expect(page.locator("[data-testid=dimension]").first).to_contain_text("e2e-judge")
    page.screenshot(path=str(ARTIFACTS / "study-report.png"), full_page=True)

    with page.expect_download() as download:
        page.get_by_role("link", name="citable bundle (zip)").click()
    names = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read())).namelist()
    assert f"faithbench-report-study-{study.pk}-v1/ratings.csv" in names
