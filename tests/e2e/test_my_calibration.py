"""In real Chromium: an expert's My calibration page shows nothing while the cycle is open and their feedback once
it closes — never another expert's name or a model's name (issue 34)."""
from __future__ import annotations

import pytest

from annotations.lifecycle import cycle_close
from annotations.models import Assignment, CycleItem
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.adjudication.services import adjudication_record
from tests.annotations.factories import (
    MODEL_NAME_MARKER,
    MODEL_PROVIDER_MARKER,
    OTHER_EXPERT_EMAIL,
    OTHER_EXPERT_NAME,
)
from tests.e2e.scoring_helpers import read, scoring_world, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_my_calibration_appears_only_after_the_cycle_closes_in_the_browser(live_server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    world = scoring_world()
    third = world.catholic.members.exclude(pk__in=[world.expert.pk, world.other_expert.pk]).first()
    for who, value in ((world.expert, 0), (world.other_expert, 3), (third, 2)):
        for assignment in Assignment.objects.filter(expert=who):
            keys = sub_dimension_keys(assignment=assignment)
            annotation_submit(assignment=assignment, actor=who, data=AnnotationInput(
                scores=dict.fromkeys(keys, value), rationale=f"{OTHER_EXPERT_NAME} on {MODEL_NAME_MARKER}"
                if who == world.other_expert else "mine"))
    item = CycleItem.objects.filter(assignments__expert=world.expert, assignments__panel=world.catholic).first()
    adjudication_record(item_id=item.pk, adjudicator=world.lead, reason="other",
                        scores=dict.fromkeys(sub_dimension_keys(assignment=item.assignments.first()), 2),
                        note=f"as {OTHER_EXPERT_NAME} said; {MODEL_PROVIDER_MARKER}")
    page = browser.new_page()
    try:
        sign_in(page, live_server.url, world.expert.email)
        page.goto(f"{live_server.url}/calibration/my-calibration/")
        expect(page.get_by_test_id("no-feedback")).to_be_visible()
        expect(page.get_by_test_id("cycle-feedback")).to_have_count(0)
        read(lambda: cycle_close(cycle=world.cycle, actor=world.admin))
        page.reload()
        expect(page.get_by_test_id("cycle-feedback")).to_have_count(1)
        expect(page.get_by_test_id("example").first).to_be_visible()
        text = page.content().lower()
        for secret in (OTHER_EXPERT_NAME, OTHER_EXPERT_EMAIL, MODEL_NAME_MARKER, MODEL_PROVIDER_MARKER):
            assert secret.lower() not in text, secret
    finally:
        page.close()
