"""In real Chromium: two experts submit Delphi round 1, the admin closes it, an expert sees the round-2 feedback
(median, IQR, own previous value) and submits round 2 with a running total of exactly 100.

Debian's chromium at /usr/bin/chromium is required (`apt-get install -y chromium`); without it this test
FAILS rather than skips. Screenshots are saved under tests/e2e/artifacts/ on every run (delphi-round-2.png, delphi-admin-round-1.png),
and whatever was on screen when a step failed (delphi-failure.png).
"""
from __future__ import annotations

import re
from decimal import Decimal

import pytest

from delphi.models import DelphiAllocation, DelphiResponse
from tests.delphi.factories import allocation, delphi_world_build
from tests.e2e.conftest import ARTIFACTS

PASSWORD = "pw-e2e-delphi-1357"


def sign_in(new_context, base: str, email: str):  # type: ignore[no-untyped-def]
    """A fresh browser context (pytest-playwright's factory) signed in as `email`, on the Delphi study list."""
    context = new_context()
    page = context.new_page()
    page.goto(f"{base}/accounts/login/?next=/delphi/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(r"/delphi/$"))
    return context, page


def fill_allocation(page, structure, points: dict[str, Decimal]) -> None:  # type: ignore[no-untyped-def]
    for f in structure.fields:
        page.fill(f"#{f.dom_id}", f"{points[f.key]:f}")


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_two_experts_round_1_admin_closes_expert_sees_feedback_and_submits_round_2(live_server, new_context) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = delphi_world_build()
    alice, bob = world.expert, world.others[0]
    for user in (alice, bob, world.admin):
        user.set_password(PASSWORD)
        user.save()
    structure = world.structure
    study_url = f"{live_server.url}/delphi/{world.study.pk}/"

    # Round 1: Alice gives textual 35 / hermeneutical 10, Bob 15 / 30 (every group shifted by ±10).
    for user, shift in ((alice, 10), (bob, -10)):
        context, page = sign_in(new_context, live_server.url, user.email)
        page.get_by_role("link", name="Give your weights").click()
        page.wait_for_url(re.compile(r"/respond/$"))
        expect(page.locator("#total-dimensions")).to_have_text("0")
        fill_allocation(page, structure, allocation(structure, shift=shift).points)
        for group in structure.groups:
            expect(page.locator(f"#total-{group.id}")).to_have_text("100")
        expect(page.locator("#js-summary")).to_have_text("Every group totals exactly 100.")
        page.click("#submit-weights")
        page.wait_for_url(study_url)
        expect(page.locator(".messages")).to_contain_text("Your round 1 weights are saved")
        context.close()

    # The admin closes round 1: 2 of 5 answered, round 2 opens.
    context, page = sign_in(new_context, live_server.url, world.admin.email)
    page.goto(study_url)
    page.click("#close-round")
    expect(page.locator(".messages")).to_contain_text("Round 1 closed: 2 of 5 panelists answered")
    expect(page.locator(".messages")).to_contain_text("Round 2 is open.")
    expect(page.locator('[data-testid="non-responders-1"]')).to_have_text("3")
    page.screenshot(path=str(ARTIFACTS / "delphi-admin-round-1.png"), full_page=True)
    context.close()

    # Round 2: Alice sees the group median, IQR and her own previous value, and adjusts.
    context, page = sign_in(new_context, live_server.url, alice.email)
    page.get_by_role("link", name="Give your weights").click()
    expect(page.locator("h1")).to_contain_text("round 2")
    # textual: 35 and 15 → median 25, Q1 20, Q3 30, IQR 10 (not below 10: not converged)
    expect(page.locator('[data-testid="median-textual"]')).to_have_text("25")
    expect(page.locator('[data-testid="iqr-textual"]')).to_have_text("10")
    expect(page.locator('[data-testid="own-previous-textual"]')).to_have_text("35")
    expect(page.locator('[data-testid="median-textual.lexicalAccuracy"]')).to_have_text("35")
    expect(page.locator("#fb-w-textual svg.histogram")).to_be_visible()
    expect(page.locator("#w-textual")).to_have_value("35")  # the form starts from her round-1 answer
    expect(page.locator("#total-dimensions")).to_have_text("100")
    # Live running total while typing (tenths, no floating point): 27.5 + 10 + 20 + 15 + 10 + 10 = 92.5.
    page.fill("#w-textual", "27.5")
    expect(page.locator("#total-dimensions")).to_have_text("92.5")
    expect(page.locator('[data-remaining-for="dimensions"]')).to_have_text("7.5 left to allocate")
    page.fill("#w-hermeneutical", "17.55")
    expect(page.locator("#hint-w-hermeneutical")).to_have_text("At most one decimal place, e.g. 12.5.")
    page.fill("#w-hermeneutical", "17.5")
    expect(page.locator("#total-dimensions")).to_have_text("100")
    expect(page.locator('[data-total-box="dimensions"]')).to_have_class(re.compile(r"\bok\b"))
    page.fill('textarea[name="r__textual"]', "Moved towards the group median.")
    page.screenshot(path=str(ARTIFACTS / "delphi-round-2.png"), full_page=True)
    page.click("#submit-weights")
    page.wait_for_url(study_url)
    expect(page.locator(".messages")).to_contain_text("Your round 2 weights are saved")
    context.close()

    response = DelphiResponse.objects.get(round=world.round(2), expert=alice)
    points = dict(DelphiAllocation.objects.filter(response=response).values_list("key", "points"))
    assert sum(points[d.key] for d in structure.dimensions) == Decimal("100")
    assert points["textual"] == Decimal("27.5") and points["hermeneutical"] == Decimal("17.5")
    assert DelphiAllocation.objects.get(response=response, key="textual").rationale == "Moved towards the group median."
    assert not DelphiResponse.objects.filter(round=world.round(2)).exclude(expert=alice).exists()
