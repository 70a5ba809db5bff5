"""In real Chromium: the cycle closes while an expert is scoring; the next autosave is refused (409) and the
page turns read-only, saying why — htmx swaps the refusal into the whole scoring section."""
from __future__ import annotations

import re

import pytest

from annotations.lifecycle import cycle_close
from annotations.models import Annotation
from tests.annotations.factories import world_build
from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-expert-1357"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_closing_the_cycle_mid_scoring_turns_the_page_read_only(live_server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = world_build()
    world.expert.set_password(PASSWORD)
    world.expert.save()
    first = world.assignments(world.expert)[0]

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=login]", world.expert.email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/scoring/$"))
    page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
    expect(page.locator("fieldset.subdim").first).to_be_focused()
    page.keyboard.press("2")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")

    cycle_close(cycle=world.cycle, actor=world.admin, reason="end of the round")
    page.keyboard.press("1")  # the next autosave meets the closed cycle

    notice = page.locator("[data-testid=unavailable-message]")
    expect(notice).to_contain_text("This calibration cycle is closed")
    expect(page.locator("#score-form")).to_have_attribute("data-locked", "true")
    expect(page.locator("#submit-button")).to_have_count(0)
    expect(page.locator("fieldset.subdim input[type=radio]").first).to_be_disabled()
    page.screenshot(path=str(ARTIFACTS / "scoring-cycle-closed.png"), full_page=False)

    annotation = Annotation.objects.get(assignment=first)
    assert list(annotation.scores.values_list("score", flat=True)) == [2]  # the refused change was not stored
