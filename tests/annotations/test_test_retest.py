"""Test–retest in real cycles (issue 34 item 2): re-served assignments, their constraint, the service that serves
them, blinding on the expert's pages, and the cycle setting's bad input."""
from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.lifecycle import assignment_reassign, assignment_scoring_refusal
from annotations.models import Annotation, Assignment, CalibrationCycle, retest_settings_errors
from annotations.retests import retest_target, retests_serve
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.adjudication.services import adjudication_record
from calibration.cycles.forms import DrawForm
from evaluations.models import ModelResponse, TestCase
from tests.annotations.factories import World, world_build

pytestmark = pytest.mark.django_db


def _submit(assignment: Assignment, value: int = 1) -> None:
    keys = sub_dimension_keys(assignment=assignment)
    annotation_submit(assignment=assignment, actor=assignment.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, value), rationale="because"))


def _backdate(days: int, **filters: object) -> None:
    Annotation.objects.filter(**filters).update(submitted_at=timezone.now() - timedelta(days=days))


def _catholic(world: World) -> list[Assignment]:
    return list(Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("item_id"))


def _world_with_submissions(share: str = "0.34", days: int = 10) -> tuple[World, list[Assignment]]:
    """The expert submits three of their four Catholic items `days` days ago; the fourth and the neutral ones wait."""
    world = world_build()
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(retest_share=Decimal(share))
    mine = _catholic(world)
    for assignment in mine[:3]:
        _submit(assignment)
    _backdate(days, assignment__expert=world.expert)
    return world, mine


def test_test_retest_target_is_share_times_submitted_rounded_half_up() -> None:
    assert retest_target(share=Decimal("0.05"), submitted=10) == 1
    assert retest_target(share=Decimal("0.05"), submitted=9) == 0
    assert retest_target(share=Decimal("0.05"), submitted=100) == 5
    assert retest_target(share=Decimal("0.5"), submitted=3) == 2


def test_test_retest_serves_about_share_times_submitted_items_once_due_and_only_once() -> None:
    world, mine = _world_with_submissions(share="0.34")
    assert retests_serve(expert_id=world.expert.pk) == 1  # round(0.34 × 3) = 1
    retest = Assignment.objects.retests().get()
    assert retest.expert == world.expert and retest.retest_of in mine[:3] and retest.item_id == retest.retest_of.item_id
    assert retest.status == Assignment.Status.PENDING and retest.cycle == world.cycle
    assert retest.public_id != retest.retest_of.public_id
    assert retests_serve(expert_id=world.expert.pk) == 0  # topped up: nothing more until more are submitted
    assert Assignment.objects.counted().count() + 1 == Assignment.objects.count()


def test_test_retest_waits_the_minimum_delay_and_respects_off() -> None:
    world, _mine = _world_with_submissions(share="0.5", days=3)  # the default delay is 7 days
    assert retests_serve(expert_id=world.expert.pk) == 0
    assert retests_serve(expert_id=world.expert.pk, now=timezone.now() + timedelta(days=5)) == 2
    Assignment.objects.retests().delete()
    CalibrationCycle.objects.filter(pk=world.cycle.pk).update(retest_enabled=False)
    assert retests_serve(expert_id=world.expert.pk, now=timezone.now() + timedelta(days=30)) == 0


def test_test_retest_choice_is_reproducible_from_the_cycle_seed() -> None:
    world, _mine = _world_with_submissions(share="0.34")
    retests_serve(expert_id=world.expert.pk)
    chosen = Assignment.objects.retests().get().retest_of_id
    for _ in range(3):  # served again from scratch: the same item, whatever else happened in between
        Assignment.objects.retests().delete()
        assert retests_serve(expert_id=world.expert.pk) == 1
        assert Assignment.objects.retests().get().retest_of_id == chosen


def test_test_retest_constraint_allows_one_first_and_one_retest_per_item_and_expert() -> None:
    world, mine = _world_with_submissions()
    first = mine[0]
    fields = {"expert": first.expert, "cycle": first.cycle, "item": first.item, "panel": first.panel, "position": 99}
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(**fields)  # a second first assignment
    Assignment.objects.create(**fields, retest_of=first)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(**fields, retest_of=first)  # a second re-served one


def test_test_retest_is_scorable_after_the_items_gold_decision_and_never_reassigned() -> None:
    world, _mine = _world_with_submissions(share="0.34")
    retests_serve(expert_id=world.expert.pk)
    retest = Assignment.objects.retests().get()
    others = Assignment.objects.counted().filter(item=retest.item).exclude(expert=world.expert)
    for index, assignment in enumerate(others):
        _submit(assignment, value=3 if index else 0)  # the panel disagrees: the item goes to adjudication
    keys = sub_dimension_keys(assignment=retest)
    adjudication_record(item_id=retest.item_id, adjudicator=world.lead, scores=dict.fromkeys(keys, 2), reason="other",
                        note="settled")
    retest.refresh_from_db()
    assert retest.status == Assignment.Status.PENDING  # not withdrawn: that would tell the expert something
    assert assignment_scoring_refusal(assignment=retest) is None
    _submit(retest, value=2)
    assert Assignment.objects.get(pk=retest.pk).status == Assignment.Status.SUBMITTED
    from django.core.exceptions import ValidationError
    retest2 = Assignment.objects.retests().get()
    with pytest.raises(ValidationError, match="re-served"):
        assignment_reassign(assignment=retest2, to_expert=world.other_expert, actor=world.admin)


# --- blinding ------------------------------------------------------------------------------------------------

def _normalised(html: str, public_ids: list[str]) -> str:
    for public_id in public_ids:
        html = html.replace(public_id, "PUBLIC-ID")
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken" value="T"', html)
    html = re.sub(r'"X-CSRFToken": "[^"]+"', '"X-CSRFToken": "T"', html)
    html = re.sub(r'nonce="[^"]+"', 'nonce="N"', html)
    return re.sub(r'data-server-now="\d+"', 'data-server-now="0"', html)


def test_test_retest_scoring_page_is_the_same_page_as_any_other_item() -> None:
    """The expert's page of a re-served item and of an ordinary pending item with the same content are the same
    bytes once their public ids and per-request tokens are masked: no class, attribute, word or link marks it."""
    world, mine = _world_with_submissions(share="0.34")
    client = Client()
    client.force_login(world.expert)
    assert client.get(reverse("annotations:queue")).status_code == 200  # serving the queue adds the re-served item
    retest = Assignment.objects.retests().select_related("item__response__test_case").get()
    ordinary = mine[3]  # still pending: give it the same content as the re-served item
    ModelResponse.objects.filter(pk=ordinary.item.response_id).update(text=retest.item.response.text)
    TestCase.objects.filter(pk=ordinary.item.response.test_case_id).update(
        prompt=retest.item.response.test_case.prompt, dimension=retest.item.response.test_case.dimension)
    url = reverse("annotations:item", kwargs={"public_id": retest.public_id})
    assert re.fullmatch(r"/[\w/-]*/[\w-]{22}/", url)  # the URL shape of every item
    pages = [client.get(reverse("annotations:item", kwargs={"public_id": a.public_id})) for a in (retest, ordinary)]
    assert [p.status_code for p in pages] == [200, 200]
    ids = [retest.public_id, ordinary.public_id]
    assert _normalised(pages[0].content.decode(), ids) == _normalised(pages[1].content.decode(), ids)
    for page in pages:
        # scoring.js's fixed messages ("… Trying again…", the same on every item page) are not about the item
        body = re.sub(r'<script type="application/json" id="scoring-messages">.*?</script>', "",
                      page.content.decode(), flags=re.S).lower()
        assert 'id="scoring-messages"' in page.content.decode()
        assert not any(word in body for word in ("retest", "re-serve", "re-test", "again", "test–retest"))


def test_test_retest_queue_row_looks_like_any_other_row() -> None:
    world, mine = _world_with_submissions(share="0.34")
    client = Client()
    client.force_login(world.expert)
    body = client.get(reverse("annotations:queue")).content.decode()
    retest = Assignment.objects.retests().get()
    assert retest.public_id in body
    rows = {a.public_id: row for a in Assignment.objects.filter(expert=world.expert)
            for row in re.findall(rf"<tr[^>]*>(?:(?!</tr>).)*{re.escape(a.public_id)}(?:(?!</tr>).)*</tr>", body, re.S)}
    ordinary = mine[3]  # still pending, like the re-served item
    ordinary_row = re.sub(r"<td[^>]*>\d+</td>", "", rows[ordinary.public_id].replace(ordinary.public_id, "ID"))
    retest_row = re.sub(r"<td[^>]*>\d+</td>", "", rows[retest.public_id].replace(retest.public_id, "ID"))
    assert retest_row == ordinary_row  # same dimension, tradition and status: the rows cannot be told apart
    assert "retest" not in body.lower() and "re-serve" not in body.lower()


# --- the cycle setting's bad input -------------------------------------------------------------------------

def _draw_data(**extra: object) -> dict[str, object]:
    return {"name": "Retest cycle", "seed": 5, "min_per_dimension": 50, "refresh_fraction": "0.25",
            "edge_fraction": "0.10", "strategy": "proportional", **extra}


@pytest.mark.parametrize(("share", "words"), [("0", "0 % would re-serve nothing"), ("0.6", "outside 0–50 %"),
                                              ("-0.1", "outside 0–50 %")])
def test_test_retest_share_of_zero_or_over_half_is_refused_with_words_naming_the_field(share: str, words: str) -> None:
    form = DrawForm(_draw_data(retest_enabled="on", retest_share=share))
    assert not form.is_valid()
    assert list(form.errors) == ["retest_share"]
    assert "Re-serve share" in form.errors["retest_share"][0] and words in form.errors["retest_share"][0]


def test_test_retest_off_is_explicit_and_defaults_come_from_settings(settings) -> None:  # type: ignore[no-untyped-def]
    off = DrawForm(_draw_data(retest_share="0"))  # the box unticked: off, and a 0 share is then no contradiction
    assert off.is_valid(), off.errors
    assert off.retest_settings().enabled is False
    settings.RETEST_SHARE, settings.RETEST_MIN_DAYS = 0.1, 14
    on = DrawForm(_draw_data(retest_enabled="on"))
    assert on.is_valid(), on.errors
    assert on.retest_settings().share == Decimal("0.100") and on.retest_settings().min_days == 14
    assert retest_settings_errors(enabled=True, share=Decimal("0.05"), min_days=0) == {
        "retest_min_days": "Re-serve after (days): enter a whole number of days from 1 to 365."}


def test_test_retest_bad_share_on_the_draw_page_is_a_422_with_words_never_a_500(world: World) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.admin)
    response = client.post(reverse("calibration:draw"), _draw_data(retest_enabled="on", retest_share="0.75",
                                                                    action="commit"))
    assert response.status_code == 422
    assert "Re-serve share: 75.0% is outside 0–50 %" in response.content.decode()
    assert not CalibrationCycle.objects.filter(name="Retest cycle").exists()


def test_test_retest_admin_edit_is_validated_by_the_model(world: World) -> None:
    from django.core.exceptions import ValidationError

    cycle = CalibrationCycle.objects.get(pk=world.cycle.pk)
    cycle.retest_share = Decimal("0")
    with pytest.raises(ValidationError) as caught:
        cycle.full_clean()
    assert "retest_share" in caught.value.message_dict
    cycle.retest_enabled = False
    cycle.full_clean()  # off, said explicitly
