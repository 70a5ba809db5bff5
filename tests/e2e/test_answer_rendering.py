"""In real Chromium: an answer written the way LLMs write lists (right after a paragraph line, nested by two
spaces) reaches the expert as lists, with a table and Greek/Hebrew marked, not as one flattened paragraph."""
from __future__ import annotations

import pytest

from evaluations.models import ModelResponse
from tests.e2e.scoring_helpers import scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ANSWER = """Grace is treated in three steps:
- prevenient grace
  - it comes first
  - it enables assent
- justifying grace
- sanctifying grace

| Term | Greek |
| --- | --- |
| grace | χάρις |

In Genesis 1:1, בְּרֵאשִׁית opens the text.
"""


def test_llm_style_lists_and_tables_render_as_written(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    first = world.assignments(world.expert)[0]
    ModelResponse.objects.filter(pk=first.item.response_id).update(text=ANSWER)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        answer = page.locator(".prose").filter(has_text="prevenient grace")
        expect(answer.locator(":scope > ul > li")).to_have_count(3)
        expect(answer.locator(":scope > ul > li").first.locator("ul > li")).to_have_count(2)  # two-space nesting
        expect(answer.locator(":scope > p").first).to_have_text("Grace is treated in three steps:")  # not flattened
        expect(answer.locator("table td")).to_have_text(["grace", "χάρις"])
        assert "- justifying grace" not in answer.inner_text()
        expect(answer.locator("[lang=grc], .greek").first).to_contain_text("χάρις")
        expect(answer.locator("[lang=he], .hebrew").first).to_contain_text("בְּרֵאשִׁית")
    finally:
        page.close()
