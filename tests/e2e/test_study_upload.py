"""In real Chromium: an admin uploads a rating study — a `rater,item,score` file → its preview and the column
mapping (guessed by the rating-file vocabulary) → the confirmation → the study and its ratings exist and its page
offers to compute the report; a file with a wrong header shows ONE message naming the expected and found columns,
and mapping its columns by hand imports it. Names contain `study_upload` (`pytest tests/e2e -k study_upload`)."""
from __future__ import annotations

import re

import pytest

from tests.e2e.a11y import BLOCKING, axe_violations, describe, horizontal_overflow

RATER_ITEM_SCORE = "rater,item,score\n" + "".join(f"{r},i{i},{(i + (r == 'c')) % 4}\n" for i in range(8) for r in "abc")
WRONG_HEADER = "who,what,grade\n" + "".join(f"{r},i{i},{i % 4}\n" for i in range(6) for r in "ab")


@pytest.fixture(autouse=True)
def upload_jobs_run_at_once(settings):  # type: ignore[no-untyped-def]
    """The check and the import are worker jobs; here the immediate backend runs them inside the request."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def signed_in(browser_context, live_server, **options):  # type: ignore[no-untyped-def]
    from tests.annotations.factories import person
    from tests.e2e.test_accessibility import session_cookie

    admin = person("admin", name="Upload E2E Admin")
    context = browser_context(**options)  # the page's viewport is set by the caller (new_context sets its own)
    context.add_cookies([session_cookie(live_server.url, admin.email)])
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def choose_file(page, name: str, content: str) -> None:  # type: ignore[no-untyped-def]
    page.set_input_files("input[name=file]", files=[{"name": name, "mimeType": "text/csv", "buffer": content.encode()}])


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_study_upload_rater_item_score_preview_mapping_confirm(live_server, new_context, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from calibration.models import Study, StudyScore

    settings.STUDY_UPLOAD_DIR = str(tmp_path / "uploads")
    page = signed_in(new_context, live_server)
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{live_server.url}/calibration/studies/")
    page.get_by_role("link", name="Upload a study").click()
    page.wait_for_url(re.compile(r"/calibration/studies/upload/$"))
    page.get_by_label("Study name").fill("Uploaded panel — λόγος")
    page.get_by_role("radio", name=re.compile(r"Long —")).check()
    choose_file(page, "ratings.csv", RATER_ITEM_SCORE)
    page.get_by_role("button", name="Preview").click()

    page.wait_for_url(re.compile(r"/calibration/studies/upload/mapping/$"))
    preview = page.locator("[data-testid=preview]")
    expect(preview).to_contain_text("ratings.csv:2")
    expect(preview.locator("tbody tr")).to_have_count(10)
    expect(page.locator("[data-testid=header-error]")).to_have_count(0)
    expect(page.locator("select[name=item]")).to_have_value("item")
    expect(page.locator("select[name=rater]")).to_have_value("rater")
    expect(page.locator("select[name=score]")).to_have_value("score")
    expect(page.get_by_text("Ordinal — ordered categories whose distances are unknown")).to_be_visible()
    page.get_by_label("Dimension when there is no dimension column").fill("quality")
    page.get_by_role("radio", name=re.compile(r"Ordinal —")).check()
    page.set_viewport_size({"width": 375, "height": 900})
    assert horizontal_overflow(page) == 0
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.get_by_role("button", name="Check the whole file").click()

    page.wait_for_url(re.compile(r"/calibration/studies/upload/confirm/$"))
    expect(page.locator("[data-testid=import-summary]")).to_contain_text("8 items, 3 raters, 24 scores — 24 new")
    assert not Study.objects.exists()  # nothing written before the confirmation
    page.get_by_role("button", name="Import 24 scores").click()

    page.wait_for_url(re.compile(r"/calibration/studies/\d+/report/$"))
    study = Study.objects.get(name="Uploaded panel — λόγος")
    assert page.url.endswith(f"/calibration/studies/{study.pk}/report/")
    assert StudyScore.objects.filter(item__study=study, dimension__key="quality").count() == 24
    assert set(study.dimensions.values_list("level", flat=True)) == {"ordinal"}
    expect(page.locator(".messages")).to_contain_text("Imported Uploaded panel — λόγος: 8 items, 3 raters, 24 scores")
    expect(page.locator("[data-testid=no-snapshot]")).to_be_visible()
    expect(page.get_by_role("button", name="Compute version 1")).to_be_visible()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_study_upload_wrong_header_shows_one_message_then_mapping_imports(live_server, browser, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from calibration.models import Study, StudyScore

    settings.STUDY_UPLOAD_DIR = str(tmp_path / "uploads")
    # bypass_csp: axe is injected (the CSP itself is checked by the test above through `new_context`)
    page = signed_in(browser.new_context, live_server, viewport={"width": 375, "height": 900}, bypass_csp=True)
    page.goto(f"{live_server.url}/calibration/studies/upload/")
    page.get_by_label("Study name").fill("Sheet study")
    choose_file(page, "sheet.csv", WRONG_HEADER)
    page.get_by_role("button", name="Preview").click()

    page.wait_for_url(re.compile(r"/calibration/studies/upload/mapping/$"))
    message = page.locator("[data-testid=header-error]")
    expect(message).to_have_count(1)
    expect(message).to_contain_text("sheet.csv:1: wrong header: expected the columns item,rater,score")
    expect(message).to_contain_text("found: who,what,grade")
    expect(page.get_by_text("wrong header")).to_have_count(1)  # one message, not one per row
    blocking = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
    assert blocking == [], describe(blocking)
    assert horizontal_overflow(page) == 0

    page.locator("select[name=item]").select_option("what")
    page.locator("select[name=rater]").select_option("who")
    page.locator("select[name=score]").select_option("grade")
    page.get_by_role("button", name="Check the whole file").click()
    page.wait_for_url(re.compile(r"/calibration/studies/upload/confirm/$"))
    expect(page.locator("[data-testid=import-summary]")).to_contain_text("6 items, 2 raters, 12 scores")
    assert [v for v in axe_violations(page) if v["impact"] in BLOCKING] == []
    page.get_by_role("button", name="Import 12 scores").click()
    page.wait_for_url(re.compile(r"/calibration/studies/\d+/report/$"))
    assert StudyScore.objects.filter(item__study=Study.objects.get(name="Sheet study")).count() == 12
    page.context.close()
