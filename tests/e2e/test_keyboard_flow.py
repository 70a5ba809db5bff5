"""In real Chromium, with the keyboard alone: an expert signs in, scores an item, gives Delphi weights, and
reviews the submitted item — Tab, Shift+Tab, typing and Enter; no clicks, no page.goto after signing in."""
from __future__ import annotations

import re

import pytest

from annotations.models import Annotation
from delphi.models import DelphiAllocation, DelphiResponse
from delphi.services import delphi_study_create
from evaluations.models import RubricVersion
from tests.delphi.factories import allocation, weight_structure
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.scoring_helpers import PASSWORD, read, scoring_world


def tab_to(page, selector: str, *, backwards: bool = False, limit: int = 150) -> None:  # type: ignore[no-untyped-def]
    """Press Tab (or Shift+Tab) until the element matching `selector` has the keyboard focus."""
    target = page.locator(selector).first
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if target.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"the keyboard never reached {selector}")


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_expert_scores_weights_and_reviews_with_the_keyboard_only(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    rubric = RubricVersion.objects.get(version="1.0")
    study = delphi_study_create(name="Keyboard weights", rubric=rubric, panel=world.catholic,
                                created_by=world.admin).study
    structure = weight_structure(rubric=rubric)
    points = allocation(structure).points
    first = world.assignments(world.expert)[0]

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        tab_to(page, "input[name=login]")
        page.keyboard.type(world.expert.email)
        tab_to(page, "input[name=password]")
        page.keyboard.type(PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/scoring/$"))

        # Scoring: to the first item, four digits, Enter.
        tab_to(page, "#resume")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/scoring/a/{re.escape(first.public_id)}/$"))
        for key in "2122":
            page.keyboard.press(key)
        expect(page.locator("#save-status")).to_contain_text("Draft saved")  # see test_scoring_resilience
        page.keyboard.press("Enter")
        expect(page.locator("[data-testid=item-message]")).to_contain_text("Submitted.")

        # Delphi: back up to the header's link, the study, its form; every weight typed in.
        tab_to(page, "header.site a[href='/delphi/']", backwards=True)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/delphi/$"))
        tab_to(page, "a:has-text('Give your weights')")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/respond/$"))
        for field in structure.fields:
            tab_to(page, f"#{field.dom_id}", limit=20)
            page.keyboard.type(f"{points[field.key]:f}")
        expect(page.locator("#js-summary")).to_have_text("Every group totals exactly 100.")
        tab_to(page, "#submit-weights")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/delphi/{study.pk}/$"))
        expect(page.locator(".messages")).to_contain_text("Your round 1 weights are saved")

        # Review: the queue, then the submitted item, read-only with its scores.
        tab_to(page, "header.site a[href='/scoring/']", backwards=True)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/scoring/$"))
        tab_to(page, f"main a[href='/scoring/a/{first.public_id}/']")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/scoring/a/{re.escape(first.public_id)}/$"))
        expect(page.locator(".locked-note")).to_contain_text("Submitted — these are your scores.")
        expect(page.locator("fieldset.subdim input:checked")).to_have_count(4)
        page.screenshot(path=str(ARTIFACTS / "keyboard-flow-review.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-keyboard-flow.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()

    assert read(lambda: Annotation.objects.get(assignment=first).status) == Annotation.Status.SUBMITTED
    response = read(lambda: DelphiResponse.objects.get(round__study=study, expert=world.expert))
    assert read(lambda: dict(DelphiAllocation.objects.filter(response=response).values_list("key", "points"))) == points
