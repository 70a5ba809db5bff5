"""Two simultaneous submissions of one assignment: exactly one annotation, no server error (PostgreSQL)."""
from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotations.models import Annotation, AnnotationEvent
from annotations.services import sub_dimension_keys
from tests.annotations.factories import world_build


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("with_draft", [False, True], ids=["fresh", "after-draft"])
def test_two_simultaneous_submissions_make_exactly_one_annotation(with_draft: bool) -> None:
    world = world_build()
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    submit_url = reverse("annotations:submit", kwargs={"public_id": assignment.public_id})
    if with_draft:
        warm = Client()
        warm.force_login(world.expert)
        warm.post(reverse("annotations:draft", kwargs={"public_id": assignment.public_id}), {f"score-{keys[0]}": "1"})

    clients = []
    for _ in range(2):
        client = Client(raise_request_exception=False)
        client.force_login(world.expert)
        clients.append(client)
    barrier = threading.Barrier(len(clients))
    statuses: list[int] = []
    errors: list[BaseException] = []

    def submit(client: Client, value: int) -> None:
        try:
            barrier.wait(timeout=10)
            response = client.post(submit_url, {f"score-{k}": str(value) for k in keys}, HTTP_HX_REQUEST="true")
            statuses.append(response.status_code)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(c, v)) for c, v in zip(clients, (1, 2), strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert sorted(statuses) == [200, 409], statuses  # one accepted, one told it is already submitted
    annotations = Annotation.objects.filter(assignment=assignment)
    assert annotations.count() == 1
    annotation = annotations.get()
    assert annotation.status == Annotation.Status.SUBMITTED
    assert len(set(annotation.scores.values_list("score", flat=True))) == 1  # one submission's scores, not a mix
    assert AnnotationEvent.objects.filter(annotation=annotation, kind="submitted").count() == 1
