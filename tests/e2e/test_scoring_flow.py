"""In real Chromium, the scoring page's finer points (issue 23, "Experts and leads"):

- Enter in the rationale box submits once the form is complete; Shift+Enter is a new line; with a required
  rationale still empty Enter submits nothing;
- the `?` help lists Undo, Outside my expertise and Flag, and their keys work;
- the address bar follows the item on the page after submit and undo (replaced, not pushed);
- a reload right after typing never shows older text than was typed, even when the reload overtakes the
  page's own beacon; a server copy newer than the browser's wins.
"""
from __future__ import annotations

import time

import pytest
from django.db import OperationalError

from annotations.models import Annotation, Assignment
from annotations.services import sub_dimension_keys
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.scoring_helpers import read, scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SETTLED = "() => document.activeElement && document.activeElement.closest('#score-form') !== null"


def wait_for(predicate, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except OperationalError:  # SQLite's shared in-memory database, locked by the live server's thread
            pass
        time.sleep(0.1)
    return predicate()


def test_enter_in_the_rationale_submits_and_shift_enter_is_a_new_line(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        for key in "3221":  # a 3: a rationale is required; after the last digit the box has focus
            page.keyboard.press(key)
        box = page.locator("#rationale")
        expect(box).to_be_focused()
        page.keyboard.press("Enter")  # empty required rationale: nothing is submitted
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
        box.fill("")
        page.keyboard.type("First line")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("second line")
        expect(box).to_have_value("First line\nsecond line")
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-enter-rationale.png"), full_page=True)
        raise
    finally:
        page.close()
    annotation = read(lambda: Annotation.objects.get(assignment=first))
    assert annotation.status == Annotation.Status.SUBMITTED
    assert annotation.rationale == "First line\nsecond line"


def test_help_lists_undo_skip_and_flag_and_their_keys_work(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.keyboard.press("?")
        help_dialog = page.locator("#keys-help")
        expect(help_dialog).to_be_visible()
        for words in ("Undo", "Outside my expertise", "Flag this item as broken", "Shift"):
            expect(help_dialog).to_contain_text(words)
        page.keyboard.press("Escape")
        expect(help_dialog).to_be_hidden()

        page.locator("fieldset.subdim").first.focus()
        page.keyboard.press("f")  # flag: ticks the box and goes to its note
        expect(page.locator("[name=flagged_broken]")).to_be_checked()
        expect(page.locator("#broken_note")).to_be_focused()
        page.keyboard.type("Answer is cut off")
        page.keyboard.press("Escape")
        for key in "1212":
            page.keyboard.press(key)
        expect(page.locator("#save-status")).to_contain_text("Draft saved")
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
        page.wait_for_function(SETTLED)
        page.keyboard.press("u")  # undo the submission just made
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
        expect(page.locator("#score-form")).to_have_attribute("data-locked", "false")
        page.wait_for_function(SETTLED)
        page.once("dialog", lambda dialog: dialog.accept())  # "Skip this item as outside your expertise?"
        page.keyboard.press("x")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-help-keys.png"), full_page=True)
        raise
    finally:
        page.close()
    annotation = read(lambda: Annotation.objects.get(assignment=first))
    assert annotation.status == Annotation.Status.SKIPPED
    assert annotation.flagged_broken and annotation.broken_note == "Answer is cut off"


def test_the_address_bar_follows_the_item_after_submit_and_undo(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first, second = world.assignments(world.expert)[:2]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        entries = page.evaluate("() => history.length")
        for key in "2222":
            page.keyboard.press(key)
        expect(page.locator("#save-status")).to_contain_text("Draft saved")
        page.keyboard.press("Enter")
        expect(page.locator("#scoring")).to_have_attribute("data-item", second.public_id)
        expect(page).to_have_url(f"{live_server.url}/scoring/a/{second.public_id}/")
        page.wait_for_function(SETTLED)
        page.click("#undo-button")
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
        expect(page).to_have_url(f"{live_server.url}/scoring/a/{first.public_id}/")
        # Replaced, not pushed: Back leaves the scoring page instead of stepping through items.
        assert page.evaluate("() => history.length") == entries
        page.reload()  # a reload shows the item that was on screen
        expect(page.locator("#scoring")).to_have_attribute("data-item", first.public_id)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-url-follows.png"), full_page=True)
        raise
    finally:
        page.close()


def test_a_reload_that_overtakes_its_beacon_shows_the_newest_text(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    import annotations.views as views

    real_draft = views.annotation_draft_save
    world = scoring_world()
    first = world.assignments(world.expert)[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        page.focus("#rationale")
        page.keyboard.type("Saved part.")
        expect(page.locator("#save-status")).to_contain_text("Draft saved")
        assert wait_for(lambda: Annotation.objects.filter(assignment=first, rationale="Saved part.").exists())

        # The reload's GET reaches the server before the page's last beacon: the beacon (the next draft save) is
        # held back on the server until the reloaded page has been rendered with the older text.
        held = {"calls": 0}

        def beacon_late(**kwargs):  # type: ignore[no-untyped-def]
            held["calls"] += 1
            if held["calls"] == 1:
                time.sleep(1.5)
            return real_draft(**kwargs)

        monkeypatch.setattr(views, "annotation_draft_save", beacon_late)
        page.keyboard.type(" Typed just now.")
        page.reload()  # well within the autosave's one-second debounce
        expect(page.locator("#rationale")).to_have_value("Saved part. Typed just now.")
        expect(page.locator("#save-status")).to_contain_text("Draft saved at", timeout=15_000)
        assert wait_for(lambda: held["calls"] >= 2)  # the late beacon, and the restored copy's save
        assert wait_for(lambda: Annotation.objects.filter(
            assignment=first, rationale="Saved part. Typed just now.").exists()), "the restored text was not saved"
        assert page.evaluate("() => [...Object.keys(sessionStorage), ...Object.keys(localStorage)]"
                             ".filter(k => k.startsWith('faithbench:'))") == []  # removed once saved

        # A browser copy older than the server's (another device saved later) is dropped, not restored.
        page.evaluate("""(key) => sessionStorage.setItem(key, JSON.stringify(
            {scores: {}, rationale: 'stale text', broken_note: '', flagged_broken: false, at: 1}))""",
                      f"faithbench:draft:{first.public_id}")
        page.reload()
        expect(page.locator("#rationale")).to_have_value("Saved part. Typed just now.")
        assert page.evaluate("() => Object.keys(sessionStorage).filter(k => k.startsWith('faithbench:'))") == []
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-reload-race.png"), full_page=True)
        raise
    finally:
        context.close()
    assert read(lambda: Assignment.objects.get(pk=first.pk).status) == Assignment.Status.DRAFT
    assert len(sub_dimension_keys(assignment=first)) == 4
