"""In real Chromium: a save the server stored but whose answer was lost is retried by the page with the same
idempotency key, and the retry shows success — never "Not saved", never a locked item (issue 25, item 2).

The server handles the first request (Playwright's `route.fetch` sends it and gets the real answer), then the
browser is told the connection failed (`route.abort`) or is given the outage's 503 in place of the answer. The page
retries by itself; the server answers the retry from the receipt stored with the first attempt.
"""
from __future__ import annotations

import pytest

from annotations.models import Annotation, AnnotationEvent, SaveReceipt
from annotations.services import sub_dimension_keys
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.scoring_helpers import read, scoring_world, sign_in
from tests.e2e.test_scoring_resilience import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_idempotency_key_stored_saves_whose_answers_were_lost_are_retried_to_success(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    keys = sub_dimension_keys(assignment=first)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    sent: dict[str, list[str]] = {"draft": [], "submit": []}
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.wait_for_load_state("networkidle")

        # 1. An autosave is stored, but the expert's browser gets the outage's 503 instead of the answer.
        def draft_route(route) -> None:  # type: ignore[no-untyped-def]
            sent["draft"].append(route.request.header_value("idempotency-key") or "")
            if len(sent["draft"]) == 1:
                route.fetch()  # the server handles it and commits
                route.fulfill(status=503, body="Temporarily unavailable", headers={"Retry-After": "5"})
            else:
                route.continue_()

        page.route("**/draft/", draft_route)
        page.keyboard.press("2")
        expect(page.locator("#save-status")).to_contain_text("Draft saved at")
        assert len(sent["draft"]) == 2 and sent["draft"][0] and sent["draft"][0] == sent["draft"][1], sent
        page.unroute("**/draft/")

        # 2. The submission is stored, and its answer never arrives (the connection is cut after the server's commit).
        for key in "121":  # no 0 or 3: no rationale needed
            page.keyboard.press(key)
        expect(page.locator("#save-status")).to_contain_text("Draft saved at")
        expect(page.locator("#submit-button")).to_be_focused()

        def submit_route(route) -> None:  # type: ignore[no-untyped-def]
            sent["submit"].append(route.request.header_value("idempotency-key") or "")
            if len(sent["submit"]) == 1:
                route.fetch()
                route.abort("connectionreset")
            else:
                route.continue_()

        page.route("**/submit/", submit_route)
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
        expect(page.locator("[data-testid=item-message]")).to_contain_text("Submitted.")
        expect(page.locator("#js-message")).to_be_empty()  # no "Submitting failed", no "already submitted"
        assert len(sent["submit"]) == 2 and sent["submit"][0] and sent["submit"][0] == sent["submit"][1], sent
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-exactly-once.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    assert wait_for(lambda: Annotation.objects.get(assignment=first).status == Annotation.Status.SUBMITTED)
    assert read(lambda: dict(Annotation.objects.get(assignment=first).scores.values_list("key", "score"))) == dict(
        zip(keys, [2, 1, 2, 1], strict=True))
    assert read(lambda: AnnotationEvent.objects.filter(annotation__assignment=first, kind="submitted").count()) == 1
    assert read(lambda: SaveReceipt.objects.filter(key=sent["submit"][0]).count()) == 1
