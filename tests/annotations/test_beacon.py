"""The autosave endpoint accepts what navigator.sendBeacon sends: a multipart form with the CSRF token in the
body (a beacon cannot set the X-CSRFToken header), and nothing without the token."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotations.models import Annotation
from annotations.services import sub_dimension_keys

pytestmark = pytest.mark.django_db


def test_beacon_draft_with_the_token_in_the_body_is_saved_and_without_it_refused(world) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.expert)
    assignment = world.assignments(world.expert)[0]
    key = sub_dimension_keys(assignment=assignment)[0]
    page = client.get(reverse("annotations:item", kwargs={"public_id": assignment.public_id})).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    draft = reverse("annotations:draft", kwargs={"public_id": assignment.public_id})

    refused = client.post(draft, {"rationale": "no token"})  # multipart, like FormData in a beacon
    assert refused.status_code == 403
    assert not Annotation.objects.filter(assignment=assignment).exists()

    saved = client.post(draft, {"csrfmiddlewaretoken": token, "rationale": "typed just before leaving",
                                f"score-{key}": "2", "seconds": "3"})
    assert saved.status_code == 200 and b"Draft saved" in saved.content
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.rationale == "typed just before leaving" and annotation.seconds_spent == 3
