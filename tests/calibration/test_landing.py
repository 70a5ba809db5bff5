"""Where people land after signing in: admins on the overview, leads on Adjudication when items wait there."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit
from calibration.landing import landing_url
from tests.annotations.factories import world_build

pytestmark = pytest.mark.django_db

DOCTRINAL = ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"]


def sign_in(client, email: str):  # type: ignore[no-untyped-def]
    return client.post(reverse("account_login"), {"login": email, "password": "pw-test-1234"})


def disagree_on_one_item(world) -> int:  # type: ignore[no-untyped-def]
    item_id = Assignment.objects.filter(panel=world.catholic, expert=world.expert).order_by("item_id")[0].item_id
    for index, assignment in enumerate(Assignment.objects.filter(item_id=item_id).select_related("expert")):
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict(zip(DOCTRINAL, [index, 1, 2, 2], strict=True)), rationale="why"))
    return item_id


def test_a_lead_without_items_to_adjudicate_lands_on_their_queue(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    assert landing_url(world.lead) == "/scoring/"
    assert sign_in(client, world.lead.email)["Location"] == "/scoring/"


def test_a_lead_with_items_to_adjudicate_lands_on_adjudication(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    disagree_on_one_item(world)
    assert sign_in(client, world.lead.email)["Location"] == "/calibration/adjudication/"
    # Their colleague leading another panel has nothing of it, and an expert never lands there.
    assert landing_url(world.other_lead) == "/scoring/"
    assert landing_url(world.expert) == "/scoring/"


def test_admins_still_land_on_the_calibration_overview(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    disagree_on_one_item(world)
    assert sign_in(client, world.admin.email)["Location"] == "/calibration/"
