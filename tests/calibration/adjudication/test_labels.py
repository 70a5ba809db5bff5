"""Adjudication pages name sub-dimensions and traditions as the rubric does, never by their keys."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotations.models import Assignment
from annotations.services import AnnotationInput, annotation_submit
from tests.annotations.factories import world_build

pytestmark = pytest.mark.django_db

DOCTRINAL = ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"]


def test_the_queue_and_the_item_show_rubric_names_and_big_gold_buttons(client) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    item_id = Assignment.objects.filter(panel=world.catholic, expert=world.expert).order_by("item_id")[0].item_id
    for index, assignment in enumerate(Assignment.objects.filter(item_id=item_id).select_related("expert")):
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict(zip(DOCTRINAL, [1, 1, index, 2], strict=True)), rationale="why"))
    client.force_login(world.lead)
    queue = client.get(reverse("calibration:adjudication_queue")).content.decode()
    assert "Nuance Recognition</strong>: scores span 2 points" in queue
    assert not re.search(r">\s*nuanceRecognition\s*<", queue) and "<code>nuanceRecognition" not in queue
    page = client.get(reverse("calibration:adjudication_item", args=[item_id])).content.decode()
    # The gold form: one fieldset of four labelled 0–3 buttons per sub-dimension, the experts' scores beside it.
    form = re.search(r'<form method="post" data-scale-form id="gold-form">(.*?)</form>', page, re.S).group(1)
    assert form.count('<fieldset class="subdim') == 4
    assert len(re.findall(r'<label title="[^"]*">\s*<input type="radio" name="gold_nuanceRecognition"', form)) == 4
    assert "Inadequate" in form and "Excellent" in form and "Experts: " in form
    assert "js/scale.js" in page and "css/scale.css" in page
