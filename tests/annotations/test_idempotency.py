"""Exactly-once scoring writes: a retry under the same idempotency key is answered from the stored receipt.

Select these with `pytest -k idempotency_key`. Each models a save whose answer the expert never saw (a dropped
connection, a 503 after the commit) followed by the page's retry with the same key. Also here: a draft or
submission naming a sub-dimension the item is not scored on is refused (422), with nothing changed.
"""
from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotation, AnnotationEvent, Assignment, SaveReceipt
from annotations.receipts import RECEIPT_TTL
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from evaluations.models import RubricSubDimension

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def url(name: str, assignment: Assignment) -> str:
    return reverse(f"annotations:{name}", kwargs={"public_id": assignment.public_id})


def scores(keys: list[str], value: int = 2) -> dict[str, str]:
    return {f"score-{k}": str(value) for k in keys}


def key_header(key: str) -> dict[str, str]:
    return {"HTTP_IDEMPOTENCY_KEY": key}


@pytest.fixture
def expert_client(client, world):  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    return client


def events(assignment: Assignment, kind: str) -> int:
    return AnnotationEvent.objects.filter(annotation__assignment=assignment, kind=kind).count()


def test_idempotency_key_repeated_submit_answers_200_with_one_submission(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    body = {**scores(sub_dimension_keys(assignment=first)), "seconds": "20"}
    key = str(uuid.uuid4())
    answers = [expert_client.post(url("submit", first), {**body, "seconds": str(s)}, **HX, **key_header(key))
               for s in (20, 7)]  # a retry reports its own seconds: not part of what is asked
    assert [a.status_code for a in answers] == [200, 200]
    for answer in answers:  # both go on to the next item, saying "Submitted."; neither says "locked"
        assert answer["HX-Replace-Url"] == url("item", second)
        assert "Submitted." in answer.content.decode() and "already submitted" not in answer.content.decode()
    assert Annotation.objects.filter(assignment=first).count() == 1
    assert events(first, AnnotationEvent.Kind.SUBMITTED) == 1
    assert SaveReceipt.objects.filter(user=world.expert, key=key).count() == 1
    assert Annotation.objects.get(assignment=first).seconds_spent == 20


def test_idempotency_key_submit_whose_answer_was_lost_after_the_commit_is_answered_on_retry(
        world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The killed connection: the service commits, then the database goes away before the answer is made (the
    handler answers 503, as it did in the outages); the page's retry with the same key must meet the stored
    submission, not a locked item."""
    import annotations.views as views

    first, second = world.assignments(world.expert)[:2]
    client = Client(raise_request_exception=False)
    client.force_login(world.expert)
    real_after_finish = views._after_finish
    calls = {"n": 0}

    def connection_lost_after_commit(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_after_finish(*args, **kwargs)

    monkeypatch.setattr(views, "_after_finish", connection_lost_after_commit)
    body = scores(sub_dimension_keys(assignment=first), 1)
    key = str(uuid.uuid4())
    lost = client.post(url("submit", first), body, **HX, **key_header(key))
    assert lost.status_code == 503  # what the expert saw …
    assert Annotation.objects.get(assignment=first).status == Annotation.Status.SUBMITTED  # … though it was stored
    retry = client.post(url("submit", first), body, **HX, **key_header(key))
    assert retry.status_code == 200, retry.content.decode()[:500]
    assert retry["HX-Replace-Url"] == url("item", second)
    assert events(first, AnnotationEvent.Kind.SUBMITTED) == 1


@pytest.mark.parametrize("carrier", ["header", "form field"])
def test_idempotency_key_retry_of_a_stored_draft_does_not_overwrite_a_newer_one(
        expert_client, world, carrier: str) -> None:  # type: ignore[no-untyped-def]
    """Autosave A is stored but its answer is lost; B (a newer entry) is saved; then A is retried. Run again, A
    would put the older score back; answered from its receipt, it changes nothing. Beacons send the key as a
    form field."""
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    key_a = str(uuid.uuid4())

    def post(body: dict[str, str], key: str):  # type: ignore[no-untyped-def]
        if carrier == "header":
            return expert_client.post(url("draft", assignment), body, **HX, **key_header(key))
        return expert_client.post(url("draft", assignment), {**body, "idempotency_key": key})

    first = post({f"score-{keys[0]}": "2"}, key_a)
    assert first.status_code == 200
    saved_a = re.search(r'data-saved-at="(\d+)"', first.content.decode()).group(1)
    assert post({f"score-{keys[0]}": "3"}, str(uuid.uuid4())).status_code == 200
    retry = post({f"score-{keys[0]}": "2"}, key_a)
    assert retry.status_code == 200
    assert re.search(r'data-saved-at="(\d+)"', retry.content.decode()).group(1) == saved_a  # the stored answer
    annotation = Annotation.objects.get(assignment=assignment)
    assert dict(annotation.scores.values_list("key", "score")) == {keys[0]: 3}
    assert events(assignment, AnnotationEvent.Kind.DRAFT_SAVED) == 2


def test_idempotency_key_draft_retried_after_the_submission_answers_200_not_locked(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    key = str(uuid.uuid4())
    draft = {f"score-{keys[0]}": "1"}
    assert expert_client.post(url("draft", assignment), draft, **HX, **key_header(key)).status_code == 200
    annotation_submit(assignment=assignment, actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(keys, 2)))
    retry = expert_client.post(url("draft", assignment), draft, **HX, **key_header(key))
    assert retry.status_code == 200 and b"Draft saved" in retry.content
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.status == Annotation.Status.SUBMITTED
    assert set(annotation.scores.values_list("score", flat=True)) == {2}


def test_idempotency_key_repeated_skip_and_undo_answer_200_once_each(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    skip_key, undo_key = str(uuid.uuid4()), str(uuid.uuid4())
    skips = [expert_client.post(url("skip", first), {}, **HX, **key_header(skip_key)) for _ in range(2)]
    assert [r.status_code for r in skips] == [200, 200]
    assert all(r["HX-Replace-Url"] == url("item", second) for r in skips)
    undos = [expert_client.post(url("undo", first), {}, **HX, **key_header(undo_key)) for _ in range(2)]
    assert [r.status_code for r in undos] == [200, 200]
    assert all("Taken back" in r.content.decode() for r in undos)
    assert events(first, AnnotationEvent.Kind.SKIPPED) == 1
    assert events(first, AnnotationEvent.Kind.UNDONE) == 1
    assert Annotation.objects.get(assignment=first).status == Annotation.Status.DRAFT


def test_idempotency_key_reused_for_other_entries_is_refused_with_nothing_changed(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    key = str(uuid.uuid4())
    keys = sub_dimension_keys(assignment=first)
    assert expert_client.post(url("submit", first), scores(keys, 2), **HX, **key_header(key)).status_code == 200
    other_entries = expert_client.post(url("submit", first), scores(keys, 1), **HX, **key_header(key))
    assert other_entries.status_code == 422
    assert "Idempotency-Key" in other_entries.content.decode()
    second_keys = sub_dimension_keys(assignment=second)  # the items may be of different dimensions
    other_item = expert_client.post(url("draft", second), {f"score-{second_keys[0]}": "1"}, **HX, **key_header(key))
    assert other_item.status_code == 422 and "Idempotency-Key" in other_item.content.decode()
    assert set(Annotation.objects.get(assignment=first).scores.values_list("score", flat=True)) == {2}
    assert not Annotation.objects.filter(assignment=second).exists()
    assert Assignment.objects.get(pk=second.pk).status == Assignment.Status.PENDING


def test_idempotency_key_that_is_not_a_key_is_refused_naming_the_header(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    response = expert_client.post(url("draft", assignment), {f"score-{keys[0]}": "1"}, **HX,
                                  **key_header("not a key; DROP"))
    assert response.status_code == 422 and "Idempotency-Key" in response.content.decode()
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_idempotency_key_receipts_are_forgotten_after_a_day(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    keys = sub_dimension_keys(assignment=first)
    old_key = str(uuid.uuid4())
    assert expert_client.post(url("draft", first), {f"score-{keys[0]}": "1"}, **HX,
                              **key_header(old_key)).status_code == 200
    SaveReceipt.objects.filter(key=old_key).update(created_at=timezone.now() - RECEIPT_TTL - timedelta(minutes=1))
    assert expert_client.post(url("draft", second), {f"score-{sub_dimension_keys(assignment=second)[0]}": "1"}, **HX,
                              **key_header(str(uuid.uuid4()))).status_code == 200
    assert SaveReceipt.objects.filter(key=old_key).exists()  # an autosave does not prune (a query each)
    assert expert_client.post(url("skip", second), {}, **HX, **key_header(str(uuid.uuid4()))).status_code == 200
    assert not SaveReceipt.objects.filter(key=old_key).exists()  # pruned when the expert next finished an item
    assert SaveReceipt.objects.filter(user=world.expert).count() == 2  # the day's: the draft and the skip


# --- sub-dimensions the item is not scored on ---------------------------------------------------------------

def foreign_key(assignment: Assignment) -> str:
    """A sub-dimension of the same rubric, but of another dimension than the item's."""
    return RubricSubDimension.objects.filter(dimension__rubric_id=assignment.cycle.rubric_id).exclude(
        key__in=sub_dimension_keys(assignment=assignment)).values_list("key", flat=True).first()


@pytest.mark.parametrize("which", ["unknown", "foreign"])
def test_draft_naming_a_sub_dimension_the_item_lacks_is_refused_and_changes_nothing(
        expert_client, world, which: str) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    key = "no_such_thing" if which == "unknown" else foreign_key(assignment)
    assert key
    response = expert_client.post(url("draft", assignment), {f"score-{key}": "2", "seconds": "10"}, **HX)
    assert response.status_code == 422
    assert f"score-{key}" in response.content.decode()  # names the field
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.PENDING


def test_submit_with_an_extra_unknown_sub_dimension_is_refused_and_changes_nothing(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    body = {**scores(sub_dimension_keys(assignment=assignment)), "score-madeUp": "1", "seconds": "10"}
    response = expert_client.post(url("submit", assignment), body, **HX)
    assert response.status_code == 422 and "score-madeUp" in response.content.decode()
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.PENDING
