"""The scoring pages over HTTP: queue, full page vs htmx partial, autosave, submit, skip, reopen."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.models import Annotation, AnnotationEvent, Assignment
from annotations.selectors import QUEUE_PAGE_SIZE
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from evaluations.methodology import SCALE
from evaluations.models import RubricSubDimension

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def expert_client(client, world):  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    return client


def form_data(keys: list[str], value: int = 2, **extra: str) -> dict[str, str]:
    return {**{f"score-{k}": str(value) for k in keys}, **extra}


def url(name: str, assignment: Assignment) -> str:
    return reverse(f"annotations:{name}", kwargs={"public_id": assignment.public_id})


def test_queue_shows_progress_and_where_to_resume(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    mine = world.assignments(world.expert)
    annotation_submit(assignment=mine[0], actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=mine[0]), 2)))
    response = expert_client.get(reverse("annotations:queue"))
    html = response.content.decode()
    assert f"1 / {len(mine)} done" in html
    assert response.context["resume_id"] == mine[1].public_id
    assert "Continue where you left off" in html
    nxt = expert_client.get(reverse("annotations:next"))
    assert nxt["Location"] == url("item", mine[1])


def test_item_page_full_and_htmx_partial(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    response = expert_client.get(url("item", assignment))
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    full_page = response.content.decode()
    assert full_page.startswith("<!doctype html>") and "js/scoring.js" in full_page and "htmx.min.js" in full_page
    partial = expert_client.get(url("item", assignment), **HX).content.decode()
    assert not partial.lstrip().startswith("<!doctype") and 'id="scoring"' in partial
    for keys in (sub_dimension_keys(assignment=assignment),):
        for key in keys:
            assert f'name="score-{key}"' in partial
    for level in SCALE:
        assert level.criteria in partial and level.label in partial


def test_autosave_returns_the_save_status_fragment(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    response = expert_client.post(url("draft", assignment), {f"score-{keys[0]}": "3", "seconds": "12"}, **HX)
    assert response.status_code == 200 and b"Draft saved" in response.content
    annotation = Annotation.objects.get(assignment=assignment)
    assert dict(annotation.scores.values_list("key", "score")) == {keys[0]: 3}
    assert annotation.seconds_spent == 12
    bad = expert_client.post(url("draft", assignment), {f"score-{keys[0]}": "9"}, **HX)
    assert bad.status_code == 422 and b"0 to 3" in bad.content


def test_submit_validation_errors_come_back_with_422(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    response = expert_client.post(url("submit", assignment), form_data(keys, 3), **HX)
    assert response.status_code == 422
    assert b"A rationale is required when any score is 0 or 3." in response.content
    assert response.content.count(b"checked") >= len(keys)  # what was typed is shown again
    response = expert_client.post(url("submit", assignment), {f"score-{keys[0]}": "1"}, **HX)
    assert response.status_code == 422 and b"Score every sub-dimension" in response.content


def test_htmx_submit_renders_the_next_item_and_pushes_its_url(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    keys = sub_dimension_keys(assignment=first)
    response = expert_client.post(url("submit", first), form_data(keys, 3, rationale="Excellent sourcing."), **HX)
    assert response.status_code == 200
    assert response["HX-Replace-Url"] == url("item", second)
    html = response.content.decode()
    assert f'data-item="{second.public_id}"' in html
    assert f"1 / {len(world.assignments(world.expert))} done" in html
    annotation = Annotation.objects.get(assignment=first)
    assert annotation.status == "submitted" and annotation.rationale == "Excellent sourcing."


def test_plain_post_submit_redirects_to_the_next_item(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    response = expert_client.post(url("submit", first), form_data(sub_dimension_keys(assignment=first), 2))
    assert response.status_code == 302 and response["Location"] == url("item", second)


def test_submitted_item_shows_own_scores_read_only_and_second_submit_is_409(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=first)
    expert_client.post(url("submit", first), form_data(keys, 1))
    page = expert_client.get(url("item", first)).content.decode()
    assert "Submitted — these are your scores." in page and 'data-locked="true"' in page
    assert page.count("disabled") >= 4 * len(keys)
    again = expert_client.post(url("submit", first), form_data(keys, 2), **HX)
    assert again.status_code == 409 and b"already submitted" in again.content
    draft = expert_client.post(url("draft", first), form_data(keys, 2), **HX)
    assert draft.status_code == 409
    assert set(Annotation.objects.get(assignment=first).scores.values_list("score", flat=True)) == {1}


def test_skip_moves_on(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first, second = world.assignments(world.expert)[:2]
    response = expert_client.post(url("skip", first), {"flagged_broken": "on", "broken_note": "cut off"}, **HX)
    assert response.status_code == 200 and response["HX-Replace-Url"] == url("item", second)
    annotation = Annotation.objects.get(assignment=first)
    assert annotation.status == "skipped" and annotation.flagged_broken


def test_last_item_leads_to_all_done(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    mine = world.assignments(world.expert)
    for assignment in mine[:-1]:
        annotation_submit(assignment=assignment, actor=world.expert,
                          data=AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=assignment), 2)))
    last = mine[-1]
    response = expert_client.post(url("submit", last), form_data(sub_dimension_keys(assignment=last), 2), **HX)
    assert response["HX-Replace-Url"] == reverse("annotations:queue")
    assert b"All done" in response.content and f"{len(mine)} / {len(mine)} done".encode() in response.content


def test_heartbeat_records_capped_seconds(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    first = world.assignments(world.expert)[0]
    assert expert_client.post(url("heartbeat", first), {"seconds": "15"}).status_code == 204
    # ten minutes pass (heartbeats are also capped by the wall-clock time since the last one)
    Annotation.objects.filter(assignment=first).update(last_beat_at=timezone.now() - timedelta(minutes=10))
    assert expert_client.post(url("heartbeat", first), {"seconds": "3000"}).status_code == 204
    assert expert_client.post(url("heartbeat", first), {"seconds": "nonsense"}).status_code == 204
    assert Annotation.objects.get(assignment=first).seconds_spent == 45


def test_panel_lead_reopens_from_the_lead_page(client, world) -> None:  # type: ignore[no-untyped-def]
    mine = [a for a in world.assignments(world.expert) if a.panel_id == world.catholic.pk]
    annotation_submit(assignment=mine[0], actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=mine[0]), 2)))
    client.force_login(world.lead)
    page = client.get(reverse("annotations:lead")).content.decode()
    assert mine[0].public_id in page and "Reopen" in page
    response = client.post(url("reopen", mine[0]), {"note": "please check"})
    assert response.status_code == 302
    assert Annotation.objects.get(assignment=mine[0]).status == "draft"
    assert AnnotationEvent.objects.filter(kind="reopened", actor=world.lead, note="please check").exists()
    other = Client()
    other.force_login(world.other_lead)
    assert mine[0].public_id not in other.get(reverse("annotations:lead")).content.decode()


def test_queue_is_paginated(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    response = expert_client.get(reverse("annotations:queue"), {"page": "2"})
    assert response.status_code == 200 and response.context["rows"] == []
    assert len(world.assignments(world.expert)) <= QUEUE_PAGE_SIZE


# --- invalid posts: the form's field errors on the page, nothing saved ------------------------------------


def field_errors(html: str, dom_id: str) -> str:
    """The text of the error list with this id (the one next to its field)."""
    match = re.search(rf'<ul class="errorlist[^"]*" id="{re.escape(dom_id)}">(.*?)</ul>', html, re.S)
    assert match, f"no error list #{dom_id}"
    return match.group(1)


def test_submit_with_a_score_outside_the_scale_shows_the_error_next_to_that_sub_dimension(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    data = form_data(keys, 2)
    data[f"score-{keys[1]}"] = "7"
    response = expert_client.post(url("submit", assignment), data)
    html = response.content.decode()
    assert response.status_code == 422
    assert "Scores are whole numbers from 0 to 3." in field_errors(html, f"err-{keys[1]}")
    assert f'id="err-{keys[0]}"' not in html  # the valid ones carry no error
    assert response.context["form"].errors[f"score-{keys[1]}"] == ["Scores are whole numbers from 0 to 3."]
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.PENDING


def test_submit_without_the_required_rationale_marks_the_rationale_and_each_missing_score(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    response = expert_client.post(url("submit", assignment), {f"score-{keys[0]}": "0", "rationale": "   "}, **HX)
    html = response.content.decode()
    assert response.status_code == 422
    assert "A rationale is required when any score is 0 or 3." in field_errors(html, "err-rationale")
    assert f"Score every sub-dimension before submitting ({len(keys) - 1} missing)." in html
    for key in keys[1:]:
        assert "Score this sub-dimension." in field_errors(html, f"err-{key}")
    assert f'id="err-{keys[0]}"' not in html
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_autosave_of_a_bad_value_names_the_field_and_saves_nothing(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    keys = sub_dimension_keys(assignment=assignment)
    name = RubricSubDimension.objects.get(dimension__rubric=world.cycle.rubric, key=keys[0]).name
    response = expert_client.post(url("draft", assignment), {f"score-{keys[0]}": "three", f"score-{keys[1]}": "2"}, **HX)
    assert response.status_code == 422
    assert f"{name}: Scores are whole numbers from 0 to 3." in response.content.decode()
    long_note = expert_client.post(url("draft", assignment), {"flagged_broken": "on", "broken_note": "x" * 501}, **HX)
    assert long_note.status_code == 422
    assert "Broken note: Ensure this value has at most 500 characters (it has 501)." in long_note.content.decode()
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_skip_with_a_too_long_note_shows_the_error_next_to_the_note_and_does_not_skip(expert_client, world) -> None:  # type: ignore[no-untyped-def]
    assignment = world.assignments(world.expert)[0]
    response = expert_client.post(url("skip", assignment), {"flagged_broken": "on", "broken_note": "y" * 600}, **HX)
    html = response.content.decode()
    assert response.status_code == 422 and 'id="scoring"' in html
    assert "at most 500 characters" in field_errors(html, "err-broken_note")
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.PENDING
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_reopen_with_a_too_long_note_shows_the_error_on_that_row_and_reopens_nothing(client, world) -> None:  # type: ignore[no-untyped-def]
    mine = [a for a in world.assignments(world.expert) if a.panel_id == world.catholic.pk]
    annotation_submit(assignment=mine[0], actor=world.expert,
                      data=AnnotationInput(scores=dict.fromkeys(sub_dimension_keys(assignment=mine[0]), 2)))
    client.force_login(world.lead)
    response = client.post(url("reopen", mine[0]), {"note": "z" * 501})
    html = response.content.decode()
    assert response.status_code == 400
    assert "at most 500 characters" in field_errors(html, f"err-note-{mine[0].public_id}")
    assert Annotation.objects.get(assignment=mine[0]).status == "submitted"
    assert not AnnotationEvent.objects.filter(kind="reopened").exists()
