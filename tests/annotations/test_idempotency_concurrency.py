"""Exactly-once scoring writes under concurrency (PostgreSQL): duplicates sent at the same moment with one key.

A page whose first attempt is slow may send its retry while the first is still running (and `hx-sync` may even
abort the first in the browser after the server took it). With the same idempotency key the two requests are
serialised by the assignment's row lock; the second finds the first's receipt and answers as it did.
"""
from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotations.models import Annotation, AnnotationEvent, SaveReceipt
from annotations.services import sub_dimension_keys
from tests.annotations.factories import world_build
from tests.concurrency import run_together

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def expert_client(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_idempotency_key_two_simultaneous_duplicate_submits_store_one_and_both_answer_200() -> None:
    world = world_build()
    assignment = world.assignments(world.expert)[0]
    body = {f"score-{k}": "2" for k in sub_dimension_keys(assignment=assignment)}
    submit_url = reverse("annotations:submit", kwargs={"public_id": assignment.public_id})
    key = str(uuid.uuid4())
    clients = [expert_client(world.expert) for _ in range(2)]

    def send(client: Client) -> str:
        return str(client.post(submit_url, body, HTTP_HX_REQUEST="true", HTTP_IDEMPOTENCY_KEY=key).status_code)

    outcomes = run_together(*(lambda c=c: send(c) for c in clients))
    assert outcomes == ["200", "200"], outcomes
    assert Annotation.objects.filter(assignment=assignment).count() == 1
    assert AnnotationEvent.objects.filter(annotation__assignment=assignment, kind="submitted").count() == 1
    assert SaveReceipt.objects.filter(user=world.expert, key=key).count() == 1


def test_idempotency_key_sent_for_two_items_at_once_stores_one_write_and_refuses_the_other() -> None:
    world = world_build()
    first, second = world.assignments(world.expert)[:2]
    key = str(uuid.uuid4())
    clients = [expert_client(world.expert) for _ in range(2)]

    def send(client: Client, assignment) -> str:  # type: ignore[no-untyped-def]
        keys = sub_dimension_keys(assignment=assignment)
        response = client.post(reverse("annotations:draft", kwargs={"public_id": assignment.public_id}),
                               {f"score-{keys[0]}": "1"}, HTTP_HX_REQUEST="true", HTTP_IDEMPOTENCY_KEY=key)
        return str(response.status_code)

    outcomes = run_together(lambda: send(clients[0], first), lambda: send(clients[1], second))
    assert sorted(outcomes) == ["200", "422"], outcomes  # the unique (user, key) constraint decides
    stored = SaveReceipt.objects.get(user=world.expert, key=key)
    refused = second if stored.assignment_id == first.pk else first
    assert not Annotation.objects.filter(assignment=refused).exists()  # the loser's write was rolled back
