"""In real Chromium: an expert signs in, scores two items with the keyboard alone, and the progress bar advances.

The browser comes from pytest-playwright's fixtures (tests/e2e/conftest.py: the system's Chromium, else
Playwright's own); without one this test FAILS rather than skips. A screenshot of the scoring page is saved
under tests/e2e/artifacts/ on every run; pytest-playwright saves one of whatever was on screen when a step failed.
"""
from __future__ import annotations

import re

import pytest

from annotations.models import Annotation, Assignment
from annotations.services import sub_dimension_keys
from tests.annotations.factories import world_build
from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-expert-2468"


def progress_text(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator("[data-testid=progress-text]").inner_text()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_expert_scores_two_items_with_the_keyboard(live_server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = world_build()
    world.expert.set_password(PASSWORD)
    world.expert.save()
    queue = world.assignments(world.expert)
    total = len(queue)

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=login]", world.expert.email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/scoring/$"))
    expect(page.locator("[data-testid=progress-text]")).to_have_text(f"0 / {total} done")

    # From the queue to the first item with the keyboard: focus "Start scoring" and press Enter.
    page.focus("#resume")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/scoring/a/{re.escape(queue[0].public_id)}/$"))
    rows = page.locator("fieldset.subdim")
    expect(rows).to_have_count(len(sub_dimension_keys(assignment=queue[0])))
    expect(rows.first).to_be_focused()  # focus starts on the first sub-dimension

    # Item 1: 2, 1, 2, 2 — digits score and move on; after the last, focus is on Submit.
    for key in "2122":
        page.keyboard.press(key)
    expect(page.locator("#submit-button")).to_be_focused()
    expect(page.locator("#save-status")).to_contain_text("Draft saved")  # autosave via htmx
    page.screenshot(path=str(ARTIFACTS / "scoring-page.png"), full_page=True)
    page.keyboard.press("Enter")
    expect(page.locator("[data-testid=progress-text]")).to_have_text(f"1 / {total} done")
    expect(page.locator("#scoring")).to_have_attribute("data-item", queue[1].public_id)
    assert page.url.endswith(f"/scoring/a/{queue[1].public_id}/")  # htmx pushed the next item's URL

    # Item 2: a 3 needs a rationale — after the last digit the rationale box gets focus.
    expect(page.locator("fieldset.subdim").first).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")  # incomplete: refused in the page, nothing sent
    expect(page.locator("#js-message")).to_have_text("Score every sub-dimension first.")
    for key in "3221":
        page.keyboard.press(key)
    expect(page.locator("#rationale")).to_be_focused()
    page.keyboard.type("Cites Trent and Aquinas precisely; λόγος handled well.")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator("[data-testid=progress-text]")).to_have_text(f"2 / {total} done")
    expect(page.locator(".progress")).to_have_attribute("aria-valuenow", "2")

    # The help dialog opens with "?".
    page.keyboard.press("?")
    expect(page.locator("#keys-help")).to_be_visible()
    page.keyboard.press("Escape")
    page.screenshot(path=str(ARTIFACTS / "scoring-after-two.png"), full_page=False)

    first, second = (Annotation.objects.get(assignment=a) for a in queue[:2])
    assert first.status == second.status == Annotation.Status.SUBMITTED
    keys1, keys2 = (sub_dimension_keys(assignment=a) for a in queue[:2])
    assert dict(first.scores.values_list("key", "score")) == dict(zip(keys1, (2, 1, 2, 2), strict=True))
    assert dict(second.scores.values_list("key", "score")) == dict(zip(keys2, (3, 2, 2, 1), strict=True))
    assert second.rationale == "Cites Trent and Aquinas precisely; λόγος handled well."
    assert Assignment.objects.filter(expert=world.expert, status="submitted").count() == 2
