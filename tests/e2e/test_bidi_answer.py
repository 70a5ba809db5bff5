"""In real Chromium (issue 35 §4): an English answer quoting Hebrew and Greek reads back in logical order — the
characters as the model wrote them, each foreign run isolated — so copying a verse out gives the verse."""
from __future__ import annotations

import pytest

from evaluations.models import ModelResponse
from tests.e2e.scoring_helpers import scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HEBREW = "בְּרֵאשִׁית בָּרָא אֱלֹהִים"
GREEK = "Ἐν ἀρχῇ ἦν ὁ λόγος"
SENTENCE = f"Genesis 1:1 opens with {HEBREW}, and John 1:1 answers it with {GREEK}, 3 words later."


def test_bidi_mixed_answer_reads_back_in_logical_order(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    world = scoring_world()
    first = world.assignments(world.expert)[0]
    ModelResponse.objects.filter(pk=first.item.response_id).update(text=SENTENCE)
    page = browser.new_page(viewport={"width": 375, "height": 800})
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/scoring/a/{first.public_id}/")
        answer = page.locator(".prose").filter(has_text="Genesis 1:1 opens with")
        assert answer.inner_text().strip() == SENTENCE  # logical order, nothing inserted or dropped
        hebrew = answer.locator('[lang="he"]')
        assert hebrew.inner_text() == HEBREW
        assert hebrew.evaluate("e => [getComputedStyle(e).direction, getComputedStyle(e).unicodeBidi]") == [
            "rtl", "isolate"]
        assert answer.locator('[lang="grc"]').inner_text() == GREEK
        # The selection a reader copies: select the Hebrew run and read it back as the clipboard would get it.
        copied = hebrew.evaluate("""e => { const r = document.createRange(); r.selectNodeContents(e);
            const s = getSelection(); s.removeAllRanges(); s.addRange(r); return s.toString(); }""")
        assert copied == HEBREW
        # Visually, the English after the Hebrew stays to its right (the isolate keeps ", and John" in place).
        boxes = answer.evaluate("""e => { const t = e.innerText; const w = document.createTreeWalker(e, 4);
            let n; const out = {}; while ((n = w.nextNode())) { for (const key of ['opens with', ', and John']) {
              const i = n.data.indexOf(key); if (i >= 0) { const r = document.createRange(); r.setStart(n, i);
              r.setEnd(n, i + key.length); const b = r.getBoundingClientRect(); out[key] = [b.left, b.top]; } } }
            const h = e.querySelector('[lang=he]').getBoundingClientRect(); out.he = [h.left, h.top]; return out; }""")
        assert boxes["opens with"][1] <= boxes[", and John"][1]  # reading order runs top to bottom
    finally:
        page.close()
