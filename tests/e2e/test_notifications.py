"""In real Chromium: an expert sees how many notifications are unread, opens the inbox, follows one to the queue."""
from __future__ import annotations

import pytest

from accounts.models import Notification
from tests.e2e.scoring_helpers import read, scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_expert_follows_a_notification_to_their_queue(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()  # committing its cycle told each expert about their new items
    unread = read(lambda: Notification.objects.filter(user=world.expert, read_at__isnull=True).count())
    assert unread >= 1
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.set_default_timeout(10_000)
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/")
        expect(page.get_by_test_id("unread-count")).to_have_text(str(unread))
        expect(page.get_by_test_id("home-expert")).to_contain_text("to score in")
        page.get_by_test_id("inbox-link").click()
        expect(page.get_by_test_id("inbox")).to_contain_text(world.cycle.name)
        page.get_by_role("button", name="Open").first.click()
        page.wait_for_url(f"{live_server.url}/scoring/")
        expect(page.get_by_test_id("unread-count")).to_have_count(0 if unread == 1 else 1)
        assert read(lambda: Notification.objects.filter(user=world.expert, read_at__isnull=True).count()) == unread - 1
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll
    finally:
        page.close()
