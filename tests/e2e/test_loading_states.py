"""In real Chromium: an action that takes longer than 300 ms shows that it is running (static/js/busy.js), for a
form that loads a page (the draw preview) and for an htmx form (the scoring page's submit)."""
from __future__ import annotations

import time

import pytest

from annotations.services import sub_dimension_keys
from tests.e2e.scoring_helpers import scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
SLOW_SECONDS = 1.5


def slowed(function):  # type: ignore[no-untyped-def]
    """`function`, taking SLOW_SECONDS longer on the live server's thread (the browser's side stays free, so the
    test can watch the page while the request runs)."""

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(SLOW_SECONDS)
        return function(*args, **kwargs)

    return wrapper


def test_a_slow_page_submit_shows_a_busy_button_until_the_next_page(live_server, browser, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    try:
        sign_in(page, live_server.url, world.admin.email)
        page.goto(f"{live_server.url}/calibration/cycles/draw/")
        button = page.locator("button[value=preview]")
        expect(button).not_to_have_class("is-busy")
        import calibration.cycles.views

        monkeypatch.setattr(calibration.cycles.views, "cycle_draw_preview", slowed(calibration.cycles.views.cycle_draw_preview))
        # Playwright's locators wait for the navigation to finish, so the page being left keeps its own record:
        # what its preview button looked like when busy.js marked it, in sessionStorage (the tab's, same origin).
        page.evaluate("""() => {
            const button = document.querySelector("button[value=preview]");
            let started = null;
            document.addEventListener("submit", () => { started = performance.now(); }, {capture: true});
            new MutationObserver(() => {
                if (button.classList.contains("is-busy")) {
                    sessionStorage.setItem("busy", JSON.stringify({
                        after_ms: performance.now() - started, aria: button.getAttribute("aria-busy"),
                        disabled: button.disabled,
                        status: (document.getElementById("busy-status") || {}).textContent || ""}));
                }
            }).observe(button, {attributes: true});
        }""")
        button.click()
        expect(page.get_by_text("Nothing is stored until you commit")).to_be_visible()  # the next page came
        record = page.evaluate("JSON.parse(sessionStorage.getItem('busy'))")
        assert record is not None, "the button was never marked busy while the draw was computed"
        assert 250 <= record["after_ms"] < SLOW_SECONDS * 1000, record  # after ~300 ms, well before the answer
        assert record["aria"] == "true" and record["disabled"] is True and record["status"] == "Working…", record
        expect(page.locator("button[value=preview]")).not_to_have_class("secondary is-busy")
    finally:
        page.close()


def test_a_slow_htmx_submit_shows_a_busy_button_and_clears_it(live_server, browser, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first = world.assignments(world.expert)[0]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.wait_for_load_state("networkidle")
        import annotations.views

        monkeypatch.setattr(annotations.views, "annotation_submit", slowed(annotations.views.annotation_submit))
        for key in sub_dimension_keys(assignment=first):
            page.locator(f"input[name='score-{key}'][value='2']").check(force=True)  # its label covers it
        page.wait_for_load_state("networkidle")  # the autosaves of those choices are done
        page.click("#submit-button")
        button = page.locator("#submit-button")
        expect(button).to_have_class("is-busy", timeout=SLOW_SECONDS * 1000)
        expect(page.locator("#scoring")).not_to_have_attribute("data-item", first.public_id)  # the next item
        expect(page.locator("#submit-button")).not_to_have_class("is-busy")
    finally:
        page.close()
