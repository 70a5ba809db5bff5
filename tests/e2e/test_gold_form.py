"""In real Chromium at 375 px: the lead's gold-score form has the experts' large 0–3 buttons and keys.

A Catholic item whose three experts disagree; the panel lead lands on Adjudication, opens the item, scores
it with the keys alone (each row's four buttons on one line, each at least 40 px tall), picks the reason and
submits; the decision holds the keyed scores.
"""
from __future__ import annotations

import pytest

from annotations.models import AdjudicationDecision, Assignment
from annotations.services import AnnotationInput, annotation_submit
from tests.e2e.a11y import horizontal_overflow
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.scoring_helpers import read, scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DOCTRINAL = ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"]


def test_lead_scores_gold_with_large_buttons_and_keys_on_a_phone(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    item_id = Assignment.objects.filter(panel=world.catholic, expert=world.expert).order_by("item_id")[0].item_id
    for index, assignment in enumerate(Assignment.objects.filter(item_id=item_id).select_related("expert")):
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict(zip(DOCTRINAL, [index, 1, 2, 2], strict=True)), rationale="because"))
    page = browser.new_page(viewport={"width": 375, "height": 800})
    try:
        sign_in(page, live_server.url, world.lead.email, landing=r"/calibration/adjudication/$")
        page.goto(f"{live_server.url}/calibration/adjudication/{item_id}/")
        rows = page.locator("#gold-form fieldset.subdim")
        expect(rows).to_have_count(4)
        assert horizontal_overflow(page) == 0
        for r in range(4):
            boxes = [rows.nth(r).locator(".scale label").nth(i).bounding_box() for i in range(4)]
            # phones: two buttons a row (static/css/scale.css), so "Inadequate" keeps its word whole
            assert len({round(b["y"]) for b in boxes}) == 2, f"row {r}: the four buttons are not two rows of two: {boxes}"
            assert all(b["height"] >= 40 and b["width"] >= 60 for b in boxes), boxes
        # Legends are the rubric's names, not keys.
        expect(rows.first.locator("legend")).to_contain_text("Doctrinal Accuracy")
        rows.first.focus()
        for key in "2312":
            page.keyboard.press(key)
        expect(page.locator("#id_reason")).to_be_focused()  # after the last row: the reason, still empty
        expect(rows.nth(1).locator("input[value='3']")).to_be_checked()
        expect(page.locator("#gold-form fieldset.subdim.scored")).to_have_count(4)
        page.select_option("#id_reason", index=1)
        page.locator("#gold-form").screenshot(path=str(ARTIFACTS / "gold-form-375.png"))
        rows.first.focus()
        page.keyboard.press("Enter")  # complete: submits
        expect(page.locator(".messages")).to_contain_text("Gold scores recorded")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "failure-gold-form.png"), full_page=True)
        raise
    finally:
        page.close()
    decision = read(lambda: AdjudicationDecision.objects.get(item_id=item_id, is_current=True))
    assert dict(decision.scores.values_list("key", "score")) == dict(zip(DOCTRINAL, [2, 3, 1, 2], strict=True))
