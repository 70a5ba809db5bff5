"""The lifecycle over HTTP: refused transitions answer 409 with a message the scoring page shows; the lead's
reassignment pages and the admin's close/reopen and panel-membership forms go through the same services."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotations.lifecycle import cycle_close, cycle_reopen
from annotations.models import Annotation, Assignment, CalibrationCycle, CycleEvent
from annotations.services import AnnotationInput, annotation_draft_save, annotation_submit, sub_dimension_keys
from calibration.adjudication.services import adjudication_record
from tests.annotations.factories import person, tradition

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def url(name: str, assignment: Assignment) -> str:
    return reverse(f"annotations:{name}", kwargs={"public_id": assignment.public_id})


def form_data(assignment: Assignment, value: int = 2) -> dict[str, str]:
    return {f"score-{k}": str(value) for k in sub_dimension_keys(assignment=assignment)}


def login(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_a_closed_cycle_answers_409_and_the_page_says_why(world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    cycle_close(cycle=world.cycle, actor=world.admin)
    client = login(world.expert)
    message = "This calibration cycle is closed"

    page = client.get(url("item", first))
    html = page.content.decode()
    assert page.status_code == 200 and message in html and 'data-testid="unavailable-message"' in html
    assert 'data-locked="true"' in html and 'id="submit-button"' not in html and url("draft", first) not in html

    autosave = client.post(url("draft", first), {**form_data(first), "rationale": "late"}, **HX)
    assert autosave.status_code == 409
    # The autosave targets the save-status line; a refusal replaces the whole scoring section, read-only.
    assert autosave["HX-Retarget"] == "#scoring" and autosave["HX-Reswap"] == "outerHTML"
    body = autosave.content.decode()
    assert 'id="scoring"' in body and message in body and 'data-locked="true"' in body

    for response in (client.post(url("submit", first), form_data(first), **HX),
                     client.post(url("submit", first), form_data(first)),
                     client.post(url("skip", second), **HX)):
        assert response.status_code == 409 and message in response.content.decode()
    assert client.post(url("submit", first), form_data(first)).content.decode().startswith("<!doctype html>")
    assert not Annotation.objects.filter(assignment__in=[first, second]).exists()

    queue = client.get(reverse("annotations:queue")).content.decode()
    assert "cycle closed" in queue and 'id="resume"' not in queue


def test_a_submit_after_the_gold_decision_answers_409_and_stores_nothing(world) -> None:  # type: ignore[no-untyped-def]
    first = Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("item_id").first()
    annotation_draft_save(assignment=first, actor=world.expert, data=AnnotationInput(rationale="draft"))
    for value, assignment in zip((0, 3), Assignment.objects.filter(item=first.item).exclude(expert=world.expert),
                                 strict=True):
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), value), rationale="why"))
    cycle_close(cycle=world.cycle, actor=world.admin)
    adjudication_record(item_id=first.item_id, adjudicator=world.lead,
                        scores=dict.fromkeys(sub_dimension_keys(assignment=first), 2), reason="rubric_ambiguity")
    cycle_reopen(cycle=world.cycle, actor=world.admin, reason="more time for the other items")
    client = login(world.expert)

    response = client.post(url("submit", first), form_data(first), **HX)

    assert response.status_code == 409
    assert "withdrawn from your queue: it has been adjudicated" in response.content.decode()
    annotation = Annotation.objects.get(assignment=first)
    assert annotation.status == "draft" and not annotation.scores.exists()
    assert client.post(url("draft", first), form_data(first), **HX).status_code == 409
    page = client.get(url("item", first)).content.decode()
    assert "it has been adjudicated" in page and 'id="submit-button"' not in page
    # The queue no longer lists it, and progress does not count it.
    queue = client.get(reverse("annotations:queue"))
    assert first.public_id not in queue.content.decode()
    assert queue.context["progress"].total == Assignment.objects.filter(expert=world.expert).count() - 1


def test_removing_a_member_in_the_admin_withdraws_their_work_and_refuses_their_scores(world) -> None:  # type: ignore[no-untyped-def]
    admin = login(world.admin)
    kept = [m.pk for m in world.catholic.members.exclude(pk=world.expert.pk)]
    change = reverse("admin:annotations_panel_change", args=[world.catholic.pk])
    response = admin.post(change, {"name": world.catholic.name, "tradition": world.catholic.tradition_id,
                                   "members": kept, "lead": world.lead.pk})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not world.catholic.members.filter(pk=world.expert.pk).exists()
    catholic = Assignment.objects.filter(expert=world.expert, panel=world.catholic)
    assert set(catholic.values_list("status", "withdrawn_reason")) == {("withdrawn", "removed_from_panel")}
    event = CycleEvent.objects.get(kind="withdrawn")
    assert event.actor == world.admin and event.details["expert_id"] == world.expert.pk

    client = login(world.expert)
    assignment = catholic.first()
    response = client.post(url("submit", assignment), form_data(assignment), **HX)
    assert response.status_code == 409 and "no longer a member of its panel" in response.content.decode()
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_the_lead_reassigns_from_the_lead_pages(world) -> None:  # type: ignore[no-untyped-def]
    newcomer = person(tradition=tradition("catholic"), name="Nina Newcomer", email="nina@faithbench.test")
    world.catholic.members.add(newcomer)
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).order_by("position").first()
    lead = login(world.lead)

    listing = lead.get(reverse("annotations:lead_assignments"))
    assert listing.status_code == 200 and old.public_id in listing.content.decode()
    assert reverse("annotations:lead_assignments") in lead.get(reverse("annotations:lead")).content.decode()
    form = lead.get(url("reassign", old))
    options = form.content.decode()
    assert form.status_code == 200 and "nina@faithbench.test" in options
    assert world.other_expert.email not in options  # already has the item: not offered
    # A choice outside the offered members is a form error; nothing changes.
    bad = lead.post(url("reassign", old), {"to_expert": world.other_panel_expert.pk})
    assert bad.status_code == 422 and Assignment.objects.filter(expert=world.other_panel_expert, item=old.item).count() == 0

    done = lead.post(url("reassign", old), {"to_expert": newcomer.pk})

    assert done.status_code == 302 and done["Location"] == reverse("annotations:lead_assignments")
    new = Assignment.objects.get(expert=newcomer, item=old.item)
    assert new.reassigned_from_id == old.pk and Assignment.objects.get(pk=old.pk).status == "withdrawn"
    listing = lead.get(reverse("annotations:lead_assignments")).content.decode()
    # Handed on once (the old row is gone); the new one can move again.
    assert f"<code>{old.public_id}</code>" not in listing and f"<code>{new.public_id}</code>" in listing
    again = lead.post(url("reassign", old), {"to_expert": newcomer.pk})
    assert again.status_code == 422  # the newcomer now has the item: no longer offered
    # The new rater finds it at the end of their queue and can score it.
    nina = login(newcomer)
    assert nina.get(url("item", new)).status_code == 200
    assert nina.post(url("submit", new), form_data(new)).status_code == 302
    # Neither the old expert nor another panel's lead may reassign.
    for user in (world.expert, world.other_lead):
        assert login(user).get(url("reassign", new)).status_code == 404


def test_reassigning_in_a_closed_cycle_is_refused_with_409(world) -> None:  # type: ignore[no-untyped-def]
    newcomer = person(tradition=tradition("catholic"))
    world.catholic.members.add(newcomer)
    old = Assignment.objects.filter(expert=world.expert, panel=world.catholic).first()
    cycle_close(cycle=world.cycle, actor=world.admin)
    response = login(world.lead).post(url("reassign", old), {"to_expert": newcomer.pk})
    assert response.status_code == 409 and "closed" in response.content.decode()
    assert not Assignment.objects.filter(expert=newcomer).exists()


def test_admin_closes_and_reopens_a_cycle_with_a_reason(world) -> None:  # type: ignore[no-untyped-def]
    admin = login(world.admin)
    change = reverse("admin:annotations_calibrationcycle_change", args=[world.cycle.pk])
    close = reverse("admin:annotations_calibrationcycle_close", args=[world.cycle.pk])
    reopen = reverse("admin:annotations_calibrationcycle_reopen", args=[world.cycle.pk])
    assert close in admin.get(change).content.decode()

    assert admin.post(close, {"reason": ""})["Location"] == change
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"
    assert reopen in admin.get(change).content.decode()
    # The change form cannot edit the status around the service.
    admin.post(change, {"name": world.cycle.name, "status": "open", "_save": "Save"})
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"

    missing = admin.post(reopen, {"reason": "  "})
    assert missing.status_code == 400 and "This field is required" in missing.content.decode()
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"
    assert admin.post(reopen, {"reason": "Panel asked for another week"})["Location"] == change
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "open"
    events = list(CycleEvent.objects.filter(cycle=world.cycle).values_list("kind", "actor", "reason"))
    assert events == [("closed", world.admin.pk, ""), ("reopened", world.admin.pk, "Panel asked for another week")]
    assert "Panel asked for another week" in admin.get(change).content.decode()  # the audit trail inline

    # The changelist action closes through the same service.
    changelist = reverse("admin:annotations_calibrationcycle_changelist")
    admin.post(changelist, {"action": "close_cycles", "_selected_action": [world.cycle.pk]})
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"
    assert CycleEvent.objects.filter(cycle=world.cycle, kind="closed").count() == 2


def test_non_staff_cannot_reach_the_admin_lifecycle_forms(world) -> None:  # type: ignore[no-untyped-def]
    reopen = reverse("admin:annotations_calibrationcycle_reopen", args=[world.cycle.pk])
    cycle_close(cycle=world.cycle, actor=world.admin)
    for user in (world.expert, world.lead):
        response = login(user).post(reopen, {"reason": "let me in"})
        assert response.status_code in (302, 403)
    assert CalibrationCycle.objects.get(pk=world.cycle.pk).status == "closed"
