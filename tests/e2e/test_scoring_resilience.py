"""In real Chromium: the scoring page never fails silently, a submission can be undone, and nothing typed is lost.

- a failed request elsewhere (here: Undo answering 500) shows the page's error banner;
- a failed autosave (500, then no connection) says so with a Retry button; the retry saves;
- a failed submit is announced (role=alert, focused) and keeps every entry;
- "Undo" after a submit brings the item back as a draft (audited);
- a rationale typed just before leaving the page reaches the server (sendBeacon on page hide);
- entries that could not be saved (offline) are kept in the browser and restored, then saved, on return.
"""
from __future__ import annotations

import re
import time

import pytest
from django.db import OperationalError

from annotations.models import Annotation, AnnotationEvent
from annotations.services import sub_dimension_keys
from tests.e2e.a11y import BLOCKING, axe_violations, describe
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.scoring_helpers import read, scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    """Poll the database until `predicate()` holds (the browser's requests commit on the live server's thread)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except OperationalError:
            # The test database is SQLite's shared in-memory one: this thread's read can meet the live server's
            # write lock ("database table is locked"). Read again.
            pass
        time.sleep(0.1)
    return predicate()


def test_failed_saves_and_submits_are_shown_and_can_be_retried(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    keys = sub_dimension_keys(assignment=first)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        status = page.locator("#save-status")
        page.wait_for_load_state("networkidle")  # nothing of the page's own start-up still in flight

        # One handler whose answer the test switches: no moment without a route, in which an autosave still
        # queued behind the previous one could reach the server.
        drafts = {"answer": "500"}

        def draft_route(route) -> None:  # type: ignore[no-untyped-def]
            if drafts["answer"] == "500":
                route.fulfill(status=500, body="boom")
            elif drafts["answer"] == "abort":
                route.abort()
            else:
                route.continue_()

        page.route("**/draft/", draft_route)
        page.keyboard.press("2")
        expect(status).to_contain_text("Not saved — the server answered 500")
        expect(status.locator("[data-state=error]")).to_be_visible()
        expect(status).not_to_contain_text("Draft saved")  # no stale success message

        drafts["answer"] = "abort"
        page.keyboard.press("1")
        expect(status).to_contain_text("Not saved — no connection to the server")
        drafts["answer"] = "pass"
        page.click("#retry-save")
        expect(status).to_contain_text("Draft saved at")
        assert wait_for(lambda: dict(Annotation.objects.get(assignment=first).scores.values_list("key", "score"))
                        == {keys[0]: 2, keys[1]: 1})

        page.locator("fieldset.subdim").nth(2).focus()
        page.keyboard.press("2")
        page.keyboard.press("2")
        expect(page.locator("#submit-button")).to_be_focused()
        page.route("**/submit/", lambda route: route.fulfill(status=500, body="boom"))
        page.keyboard.press("Enter")
        alert = page.locator("#js-message")
        expect(alert).to_contain_text("Submitting failed (the server answered 500)")
        expect(alert).to_be_focused()
        expect(alert).to_be_in_viewport()
        expect(page.locator("fieldset.subdim input:checked")).to_have_count(len(keys))  # entries kept
        page.screenshot(path=str(ARTIFACTS / "scoring-submit-failed.png"))
        page.unroute("**/submit/")
        page.click("#submit-button")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-resilience.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    assert read(lambda: Annotation.objects.get(assignment=first).status) == Annotation.Status.SUBMITTED


def test_validation_errors_are_visible_and_focused(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first = world.assignments(world.expert)[0]
    page = browser.new_page(viewport={"width": 1280, "height": 700}, bypass_csp=True)  # axe is injected
    page.set_default_timeout(10_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.keyboard.press("3")
        page.click("#submit-button")  # bypasses the page's own check: the server answers 422
        errors = page.locator("#form-errors")
        expect(errors).to_be_visible()
        first_invalid = page.locator("#score-form [aria-invalid=true]").first
        expect(first_invalid).to_be_focused()
        expect(first_invalid).to_be_in_viewport()
        message = page.locator("#err-rationale, fieldset.subdim .field-errors").first
        expect(message).to_be_visible()
        # The page with its errors is as accessible as without (axe: no serious or critical violation).
        blocking = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
        assert blocking == [], describe(blocking)
        # The page's own check (Enter with a score missing) is shown in view at the top of the panel.
        page.locator("fieldset.subdim").first.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#js-message")).to_have_text("Score every sub-dimension first.")
        expect(page.locator("#js-message")).to_be_in_viewport()
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-validation.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()


def test_undo_after_submit_brings_the_item_back_as_a_draft(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        for key in "1212":
            page.keyboard.press(key)
        # Let the autosave finish first: on SQLite an autosave racing the submit can still end in a 500
        # ("database is locked", issue 14 part 5, handled elsewhere); the page reports it, but this test is
        # about undo.
        expect(page.locator("#save-status")).to_contain_text("Draft saved")
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
        expect(page.locator("[data-testid=item-message]")).to_contain_text("Submitted.")
        # A failing request outside the scoring form is not swallowed either: a banner says so. (Wait for the
        # swapped-in item to settle — htmx binds the new undo button then — before pressing it.)
        page.wait_for_function("() => document.activeElement && document.activeElement.closest('#score-form') !== null")
        page.route("**/undo/", lambda route: route.fulfill(status=500, body="boom"))
        page.focus("#undo-button")
        page.keyboard.press("Enter")
        expect(page.locator("#request-error")).to_contain_text("The server failed (500)")
        expect(page.locator("#request-error")).to_have_attribute("role", "alert")
        page.unroute("**/undo/")
        page.focus("#undo-button")  # keyboard only: focus the button and press Enter
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
        expect(page.locator("#score-form")).to_have_attribute("data-locked", "false")
        expect(page.locator("[data-testid=item-message]")).to_contain_text("Taken back")
        assert page.url.endswith(f"/scoring/a/{first.public_id}/")
        expect(page.locator("fieldset.subdim input:checked")).to_have_count(4)  # the scores are kept
        # the swapped-in item takes focus when it settles (20 ms after the swap): keys pressed before go nowhere
        page.wait_for_function("() => document.activeElement && document.activeElement.closest('#score-form') !== null")
        page.keyboard.press("2")  # correct the mistyped first score and submit again
        expect(page.locator("#save-status")).to_contain_text("Draft saved")
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-undo.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    annotation = read(lambda: Annotation.objects.get(assignment=first))
    assert annotation.status == Annotation.Status.SUBMITTED
    assert read(lambda: sorted(annotation.scores.values_list("score", flat=True))) == [1, 2, 2, 2]
    kinds = read(lambda: list(annotation.events.exclude(kind=AnnotationEvent.Kind.DRAFT_SAVED)
                              .order_by("at", "id").values_list("kind", flat=True)))
    assert kinds == [AnnotationEvent.Kind.SUBMITTED, AnnotationEvent.Kind.UNDONE, AnnotationEvent.Kind.SUBMITTED]


def test_rationale_typed_just_before_leaving_is_saved_and_an_offline_draft_is_restored(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        # 1. Type and leave at once: the debounced autosave has not fired; the beacon carries the text.
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.focus("#rationale")
        page.keyboard.type("Quick thought before the bus")
        page.goto(f"{live_server.url}/scoring/")
        assert wait_for(lambda: Annotation.objects.filter(
            assignment=first, rationale="Quick thought before the bus").exists()), "the beacon's draft never arrived"

        # 2. Offline: the save fails, the page says so; the entries survive closing the tab.
        page.goto(f"{live_server.url}/scoring/a/{second.public_id}/")
        context.set_offline(True)
        page.focus("#rationale")
        page.keyboard.type("Written on a train")
        expect(page.locator("#save-status")).to_contain_text("Not saved — no connection", timeout=15_000)
        page.close()
        # The closing tab's beacon is handed to the browser, which may send it a moment later: stay offline until it
        # has failed, or a loaded machine delivers it after reconnecting (CI saw that once).
        time.sleep(1.5)
        context.set_offline(False)
        assert not read(lambda: Annotation.objects.filter(assignment=second, rationale__contains="train").exists())

        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{live_server.url}/scoring/a/{second.public_id}/")
        expect(page.locator("#rationale")).to_have_value("Written on a train")
        expect(page.locator("#save-status")).to_contain_text("Draft saved at", timeout=15_000)  # a loaded CI machine
        assert wait_for(lambda: Annotation.objects.filter(assignment=second, rationale="Written on a train").exists())
        assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('faithbench:'))") == []
    except BaseException:
        if not page.is_closed():  # a closed page cannot be photographed: keep the real error, not the screenshot's
            page.screenshot(path=str(ARTIFACTS / "failure-beacon.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    assert re.fullmatch(r"[\w-]+", second.public_id)


def test_submit_waits_for_a_running_autosave_instead_of_racing_it(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    import annotations.views as views

    calls: list[tuple[str, str, float]] = []
    real_draft, real_submit = views.annotation_draft_save, views.annotation_submit

    def slow_draft(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(("draft", "start", time.monotonic()))
        time.sleep(1.0)  # a slow autosave: the expert presses Enter while it is still running
        try:
            return real_draft(**kwargs)
        finally:
            calls.append(("draft", "end", time.monotonic()))

    def recorded_submit(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(("submit", "start", time.monotonic()))
        return real_submit(**kwargs)

    monkeypatch.setattr(views, "annotation_draft_save", slow_draft)
    monkeypatch.setattr(views, "annotation_submit", recorded_submit)
    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(15_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        for key in "2222":
            page.keyboard.press(key)
        expect(page.locator("#submit-button")).to_be_focused()
        page.keyboard.press("Enter")  # at once, and twice: one submission
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-submit-waits.png"), full_page=True)
        raise
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    submits = [at for name, edge, at in calls if name == "submit"]
    draft_ends = [at for name, edge, at in calls if name == "draft" and edge == "end"]
    assert len(submits) == 1 and draft_ends, calls
    assert all(end <= submits[0] for end in draft_ends), f"an autosave was still running at submit: {calls}"
    assert read(lambda: Annotation.objects.get(assignment=first).status) == Annotation.Status.SUBMITTED
