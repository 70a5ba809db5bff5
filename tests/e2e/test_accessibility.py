"""Accessibility as a test, in real Chromium on the demo data:

- axe-core (vendored, tests/e2e/vendor/) on every page of every role, at 1280 px and 375 px: no serious or
  critical violation;
- at 375 px no page scrolls sideways;
- the pages are each role's listed pages (`demo_pages`) and every kind of page their links lead to (a crawl:
  one page per URL name and query keys), so a form that only a link reaches is measured too;
- the keyboard focus ring is visible (outline ≥ 2 px) with a contrast of at least 3:1 against what surrounds it.

One browser, one context per role, each page loaded once and measured at both widths.
"""
from __future__ import annotations

import re
from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.e2e.a11y import (
    BLOCKING,
    CRAWL_LIMIT,
    NOT_FOUND_URL,
    axe_violations,
    contrast_ratio,
    crawl_links,
    demo_pages,
    describe,
    focus_ring,
    horizontal_overflow,
    page_kind,
)
from tests.e2e.conftest import ARTIFACTS

WIDTHS = (1280, 375)


def test_contrast_ratio_matches_wcag_reference_values() -> None:
    # Reference values: black on white is 21:1 (WCAG 2.2, definition of contrast ratio); #767676 on white is
    # 4.54:1, the classic lightest grey passing AA (WebAIM contrast checker gives 4.54:1).
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast_ratio((0x76, 0x76, 0x76), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)
    # The old focus colour #f2b632 on white: the 1.8:1 the accessibility review found.
    assert contrast_ratio((0xF2, 0xB6, 0x32), (255, 255, 255)) == pytest.approx(1.8, abs=0.05)


def session_cookie(base: str, email: str) -> dict:
    """A signed-in session for `email` (two-factor is off in the test settings), as a browser cookie."""
    client = Client()
    client.force_login(get_user_model().objects.get(email=email))
    return {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
            "url": base}


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_every_page_of_every_role_is_axe_clean_and_fits_a_phone(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]

    call_command("load_demo", "--i-know-this-is-not-production", stdout=StringIO(), stderr=StringIO())
    roles = demo_pages()
    assert sum(len(role.urls) for role in roles) >= 40  # the list really covers the application
    failures: list[str] = []
    crawled: dict[str, list[str]] = {}
    checked = 0
    try:
        for role in roles:
            context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}, bypass_csp=True)  # axe is injected
            if role.email:
                context.add_cookies([session_cookie(live_server.url, role.email)])
            page = context.new_page()
            page.set_default_timeout(15_000)
            # The role's listed pages first, then every kind of page their links lead to (forms included).
            todo = list(role.urls)
            kinds = {page_kind(f"{live_server.url}{url}") for url in role.urls}
            visited: set[str] = set()
            while todo and len(visited) < CRAWL_LIMIT:
                url = todo.pop(0)
                if url in visited:
                    continue
                visited.add(url)
                response = page.goto(f"{live_server.url}{url}")
                expected = 404 if url == NOT_FOUND_URL else 200
                if response is None or response.status != expected or "/accounts/login/" in page.url and \
                        "/accounts/login/" not in url:
                    failures.append(f"{role.name} {url}: status {response and response.status}, at {page.url}")
                    continue
                for link in crawl_links(page, live_server.url):
                    kind = page_kind(f"{live_server.url}{link}")
                    if kind is not None and kind not in kinds:
                        kinds.add(kind)
                        todo.append(link)
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    blocking = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
                    if blocking:
                        failures.append(f"{role.name} {url} @{width}px: {describe(blocking)}")
                    overflow = horizontal_overflow(page)
                    if overflow > 0:
                        failures.append(f"{role.name} {url} @{width}px: scrolls sideways by {overflow}px")
                        name = re.sub(r"\W+", "-", f"{role.name}{url}").strip("-")
                        page.screenshot(path=str(ARTIFACTS / f"overflow-{name}-{width}.png"), full_page=True)
                    checked += 1
                page.set_viewport_size({"width": WIDTHS[0], "height": 900})
            crawled[role.name] = sorted(visited)
            context.close()
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    assert checked >= 80
    # The crawl found the pages only a link leads to: the Delphi response form of the expert's study.
    assert any(re.fullmatch(r"/delphi/\d+/respond/", url) for url in crawled["expert"]), crawled["expert"]
    assert failures == [], "\n" + "\n".join(failures)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_keyboard_focus_is_visible_with_at_least_3_to_1_contrast(live_server, monkeypatch, browser) -> None:  # type: ignore[no-untyped-def]

    from tests.e2e.scoring_helpers import scoring_world

    world = scoring_world()
    item = world.assignments(world.expert)[0]
    seen: list[str] = []
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # axe is injected
        context.add_cookies([session_cookie(live_server.url, world.expert.email)])
        page = context.new_page()
        for url in ("/scoring/", f"/scoring/a/{item.public_id}/", "/delphi/"):
            page.goto(f"{live_server.url}{url}")
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            for _ in range(12):  # the first dozen stops of the Tab order: links, buttons, rows, fields
                page.keyboard.press("Tab")
                ring = focus_ring(page)
                if ring is None:
                    continue
                where = f"{url} {ring['tag']}"
                assert ring["style"] not in ("none", "") and ring["width"] >= 2, f"{where}: no visible outline {ring}"
                ratio = contrast_ratio(tuple(ring["color"]), tuple(ring["background"]))
                assert ratio >= 3, f"{where}: focus ring contrast {ratio:.2f}:1 against {ring['background']}"
                seen.append(where)
    finally:
        for context in browser.contexts:  # the session's browser (pytest-playwright) stays open
            context.close()
    assert len(seen) >= 20
