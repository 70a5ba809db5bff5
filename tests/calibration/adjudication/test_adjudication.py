"""Adjudication: detection on real annotations, adjudicator ≠ rater, immutable expert scores, gold export."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from annotations.models import AdjudicationDecision, Assignment, Panel, SubScore
from annotations.services import AnnotationInput, annotation_reopen, annotation_submit, sub_dimension_keys
from calibration.adjudication import selectors as adjudication_selectors
from calibration.adjudication.selectors import adjudication_queue, gold_labels, item_states
from calibration.adjudication.services import adjudication_record
from tests.annotations.factories import (
    OTHER_EXPERT_EMAIL,
    OTHER_RATIONALE_MARKER,
    person,
    tradition,
    world_build,
)

DOCTRINAL = ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"]


def score_item(world, item_id, by_expert):
    """Submit the given scores (list per sub-dimension) for every expert of a Catholic item."""
    for assignment in Assignment.objects.filter(item_id=item_id).select_related("expert"):
        scores = by_expert[assignment.expert.email]
        annotation_submit(assignment=assignment, actor=assignment.expert, data=AnnotationInput(
            scores=dict(zip(DOCTRINAL, scores, strict=True)),
            rationale=f"{OTHER_RATIONALE_MARKER} {assignment.public_id}"))


@pytest.fixture
def setup(db):
    world = world_build(catholic_cases=3)
    items = sorted(Assignment.objects.filter(panel=world.catholic, expert=world.expert).values_list("item_id", flat=True))
    emails = sorted(Assignment.objects.filter(item_id=items[0]).values_list("expert__email", flat=True))
    assert sub_dimension_keys(assignment=Assignment.objects.filter(item_id=items[0]).first()) == DOCTRINAL
    return world, items, emails


def test_disagreement_is_detected_only_when_every_expert_has_finished(setup):
    world, items, emails = setup
    first, *rest = Assignment.objects.filter(item_id=items[0])
    annotation_submit(assignment=first, actor=first.expert, data=AnnotationInput(scores=dict.fromkeys(DOCTRINAL, 1)))
    assert not item_states(item_ids=[items[0]])[items[0]].needs_adjudication  # two still scoring
    for assignment in rest:
        annotation_submit(assignment=assignment, actor=assignment.expert,
                          data=AnnotationInput(scores={**dict.fromkeys(DOCTRINAL, 1), "nuanceRecognition": 3},
                                               rationale="three"))
    state = item_states(item_ids=[items[0]])[items[0]]
    assert state.complete
    assert state.disagreements == {"nuanceRecognition": "scores span 2 points (1, 3, 3)"}
    # A unanimous item is not sent to adjudication.
    score_item(world, items[1], dict.fromkeys(emails, [2, 2, 2, 2]))
    assert not item_states(item_ids=[items[1]])[items[1]].needs_adjudication
    queue = adjudication_queue(user=world.lead)
    assert [e.item_id for e in queue] == [items[0]]


def test_adjudicator_must_not_be_a_rater_of_the_item(setup):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    gold = dict.fromkeys(DOCTRINAL, 2)
    # The expert who rated it cannot adjudicate, even when made the panel's lead.
    world.catholic.lead = world.expert
    world.catholic.save()
    with pytest.raises(PermissionDenied):
        adjudication_record(item_id=items[0], adjudicator=world.expert, scores=gold, reason="rubric_ambiguity")
    assert adjudication_queue(user=world.expert) == []
    # Another adjudicator of that panel (a member with the adjudicator role who did not rate it) may.
    colleague = person("adjudicator", tradition=tradition("catholic"), name="Colleague Adjudicator")
    world.catholic.members.add(colleague)
    assert [e.item_id for e in adjudication_queue(user=colleague)] == [items[0]]
    adjudication_record(item_id=items[0], adjudicator=colleague, scores=gold, reason="rubric_ambiguity")
    # The lead of another panel may not; an admin may.
    with pytest.raises(PermissionDenied):
        adjudication_record(item_id=items[0], adjudicator=world.other_lead, scores=gold, reason="other", note="x")
    adjudication_record(item_id=items[0], adjudicator=world.admin, scores=gold, reason="other", note="second look")


def test_expert_scores_stay_unchanged_and_decisions_keep_history(setup):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    before = sorted(SubScore.objects.filter(annotation__assignment__item_id=items[0]).values_list(
        "annotation__assignment__expert__email", "key", "score"))
    first = adjudication_record(item_id=items[0], adjudicator=world.lead, scores=dict.fromkeys(DOCTRINAL, 2),
                                reason="misread_response", note="Expert B misread the second paragraph.")
    second = adjudication_record(item_id=items[0], adjudicator=world.admin,
                                 scores={**dict.fromkeys(DOCTRINAL, 2), "doctrinalAccuracy": 1}, reason="other",
                                 note="Revised after discussion.")
    first.refresh_from_db()
    assert not first.is_current and second.is_current and second.supersedes == first
    assert AdjudicationDecision.objects.filter(item_id=items[0]).count() == 2
    after = sorted(SubScore.objects.filter(annotation__assignment__item_id=items[0]).values_list(
        "annotation__assignment__expert__email", "key", "score"))
    assert after == before
    # Reopening an expert's annotation after adjudication is refused: the evidence is frozen.
    assignment = Assignment.objects.filter(item_id=items[0]).first()
    with pytest.raises(ValidationError, match="adjudicated"):
        annotation_reopen(assignment=assignment, actor=world.admin, note="try")


def test_gold_scores_are_validated(setup):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    with pytest.raises(ValidationError) as info:
        adjudication_record(item_id=items[0], adjudicator=world.lead,
                            scores={"doctrinalAccuracy": 4, "traditionFidelity": 1, "bogus": 1}, reason="other")
    errors = info.value.message_dict
    assert set(errors) == {"doctrinalAccuracy", "nuanceRecognition", "sourceGrounding", "bogus", "note"}
    score_item(world, items[1], dict.fromkeys(emails, [2, 2, 2, 2]))
    with pytest.raises(ValidationError, match="does not need adjudication"):
        adjudication_record(item_id=items[1], adjudicator=world.lead, scores=dict.fromkeys(DOCTRINAL, 2),
                            reason="rubric_ambiguity")


def test_gold_labels_export_and_api(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    adjudication_record(item_id=items[0], adjudicator=world.lead, scores=dict(zip(DOCTRINAL, [1, 1, 2, 3], strict=True)),
                        reason="misread_response")
    rows = gold_labels(cycle=world.cycle)
    assert sorted((r["sub_dimension"], r["gold_score"]) for r in rows) == sorted(zip(DOCTRINAL, [1, 1, 2, 3], strict=True))
    assert {r["case"] for r in rows} and all("prompt" not in r for r in rows)
    client.force_login(world.admin)
    csv_body = client.get(reverse("calibration:gold_export", args=[world.cycle.pk]), {"format": "csv"})
    assert csv_body.status_code == 200
    parsed = list(csv.DictReader(io.StringIO(csv_body.content.decode())))
    assert {int(r["gold_score"]) for r in parsed if r["sub_dimension"] == "doctrinalAccuracy"} == {1}
    body = client.get(reverse("calibration:gold_export", args=[world.cycle.pk]), {"format": "json"})
    assert json.loads(body.content)["gold_labels"][0]["reason"] == "misread_response"
    from tests.accounts.api import token_auth

    client.logout()
    api = client.get("/api/v1/gold-labels/", {"cycle": world.cycle.pk}, **token_auth(world.admin))
    assert api.status_code == 200 and len(api.json()["results"]) == 4
    denied = client.get("/api/v1/gold-labels/", **token_auth(world.expert))
    assert denied.status_code == 403


def test_adjudication_page_shows_anonymous_labels_not_identities(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    client.force_login(world.lead)
    page = client.get(reverse("calibration:adjudication_item", args=[items[0]]))
    body = page.content.decode()
    assert page.status_code == 200
    assert "Expert A" in body and "Expert B" in body and "Expert C" in body
    assert OTHER_RATIONALE_MARKER in body  # the adjudicator reads every rationale ...
    assert OTHER_EXPERT_EMAIL not in body
    for model in world.models:
        assert model.name not in body and model.provider not in body  # ... but the model stays blind
    # Labels are stable per item.
    assert client.get(reverse("calibration:adjudication_item", args=[items[0]])).content.decode().count("Expert A") == \
        body.count("Expert A")
    # Experts cannot open it (404, existence not confirmed), nor the queue.
    client.force_login(world.expert)
    assert client.get(reverse("calibration:adjudication_item", args=[items[0]])).status_code == 404
    assert client.get(reverse("calibration:adjudication_queue")).status_code == 403
    # Posting the decision through the page: one 0–3 radio group per sub-dimension.
    client.force_login(world.lead)
    for key in DOCTRINAL:
        for score in range(4):
            assert f'type="radio" name="gold_{key}" value="{score}"' in body
    form = {f"gold_{k}": v for k, v in zip(DOCTRINAL, [1, 1, 2, 3], strict=True)} | {"reason": "rubric_ambiguity", "note": ""}
    response = client.post(reverse("calibration:adjudication_item", args=[items[0]]), form)
    assert response.status_code == 302
    assert AdjudicationDecision.objects.get(item_id=items[0]).adjudicator == world.lead
    assert Panel.objects.get(pk=world.catholic.pk).lead == world.lead


def test_reopen_message_reaches_the_expert_without_the_adjudicators_name(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    mine = Assignment.objects.get(item_id=items[0], expert=world.expert)
    client.force_login(world.lead)
    response = client.post(reverse("calibration:adjudication_reopen", args=[items[0], mine.public_id]),
                           {"note": "Please re-read the second paragraph on nuance."})
    assert response.status_code == 302
    client.force_login(world.expert)
    page = client.get(reverse("annotations:item", args=[mine.public_id])).content.decode()
    assert "Please re-read the second paragraph on nuance." in page
    assert world.lead.email not in page and str(world.lead) not in page


def test_adjudication_queue_query_count_does_not_grow_with_disputed_items(db, client, django_assert_max_num_queries):
    world = world_build(catholic_cases=6)
    items = sorted(Assignment.objects.filter(panel=world.catholic, expert=world.expert).values_list("item_id", flat=True))
    emails = sorted(Assignment.objects.filter(item_id=items[0]).values_list("expert__email", flat=True))
    client.force_login(world.lead)
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    with django_assert_max_num_queries(15):
        assert client.get(reverse("calibration:adjudication_queue")).status_code == 200
    for item_id in items[1:]:
        score_item(world, item_id, {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    assert len(adjudication_queue(user=world.lead)) == len(items)
    with django_assert_max_num_queries(15):
        assert client.get(reverse("calibration:adjudication_queue")).status_code == 200


def test_an_incomplete_decision_shows_each_fields_error_next_to_it_and_records_nothing(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    client.force_login(world.lead)
    url = reverse("calibration:adjudication_item", args=[items[0]])
    data = {"gold_doctrinalAccuracy": "1", "gold_traditionFidelity": "5", "gold_nuanceRecognition": "2",
            "reason": "other", "note": ""}  # sourceGrounding missing, 5 is off the scale
    response = client.post(url, data)
    assert response.status_code == 400
    form = response.context["form"]
    assert form.errors["gold_sourceGrounding"] == ["This field is required."]
    assert "Select a valid choice." in form.errors["gold_traditionFidelity"][0]
    html = response.content.decode()
    for field in ("gold_sourceGrounding", "gold_traditionFidelity"):
        assert re.search(rf'<ul class="errorlist" id="id_{field}_error"><li>', html), field
    assert 'id="id_gold_doctrinalAccuracy_error"' not in html
    # With the scores right, the service's rule ("other" needs a note) comes back on the note field.
    data.update(gold_traditionFidelity="1", gold_sourceGrounding="3")
    response = client.post(url, data)
    assert response.status_code == 400
    assert response.context["form"].errors["note"] == ["a note is required when the reason is 'other'"]
    assert re.search(r'<ul class="errorlist" id="id_note_error"><li>a note is required', response.content.decode())
    assert not AdjudicationDecision.objects.filter(item_id=items[0]).exists()


def test_reopen_from_the_adjudication_page_with_a_too_long_message_is_refused_on_that_expert(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    mine = Assignment.objects.get(item_id=items[0], expert=world.expert)
    client.force_login(world.lead)
    response = client.post(reverse("calibration:adjudication_reopen", args=[items[0], mine.public_id]),
                           {"note": "n" * 501})
    html = response.content.decode()
    assert response.status_code == 400 and "Gold score" in html
    error = re.search(rf'<ul class="errorlist" id="err-note-{mine.public_id}">(.*?)</ul>', html, re.S)
    assert error and "at most 500 characters" in error.group(1)
    assert Assignment.objects.get(pk=mine.pk).status == Assignment.Status.SUBMITTED


def test_adjudication_queue_is_paginated_in_queue_order(db, client, monkeypatch):
    world = world_build(catholic_cases=5)
    items = sorted(Assignment.objects.filter(panel=world.catholic, expert=world.expert).values_list("item_id", flat=True))
    assert len(items) == 10
    emails = sorted(Assignment.objects.filter(item_id=items[0]).values_list("expert__email", flat=True))
    for item_id in items:
        score_item(world, item_id, {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    adjudication_record(item_id=items[0], adjudicator=world.lead, scores=dict.fromkeys(DOCTRINAL, 2),
                        reason="rubric_ambiguity")
    monkeypatch.setattr(adjudication_selectors, "QUEUE_PAGE_SIZE", 4)
    client.force_login(world.lead)
    url = reverse("calibration:adjudication_queue")

    def shown(**params):  # type: ignore[no-untyped-def]
        response = client.get(url, params)
        return [e.item_id for e in response.context["entries"]], response

    pages = [shown(page=str(n)) for n in (1, 2, 3)]
    assert [ids for ids, _ in pages] == [items[1:5], items[5:9], items[9:]]
    assert [e.item_id for e in adjudication_queue(user=world.lead)] == items[1:]
    first = pages[0][1]
    assert first.context["page_obj"].paginator.count == 9
    assert "Page 1 of 3" in first.content.decode() and "?page=2" in first.content.decode()
    assert shown(page="99")[0] == items[9:]  # past the end: the last page
    assert shown(page="x")[0] == items[1:5]
    # With decided items shown, the links keep the filter.
    everything, response = shown(decided="1")
    assert everything == items[:4] and "?decided=1&amp;page=2" in response.content.decode()
    assert shown(decided="1", page="3")[0] == items[8:]


def test_no_reason_is_chosen_in_advance_and_sub_dimensions_are_named_for_people(setup, client):
    world, items, emails = setup
    score_item(world, items[0], {emails[0]: [0, 1, 2, 3], emails[1]: [3, 1, 2, 3], emails[2]: [1, 1, 2, 3]})
    client.force_login(world.lead)
    url = reverse("calibration:adjudication_item", args=[items[0]])
    html = client.get(url).content.decode()
    select = re.search(r'<select name="reason"[^>]*>(.*?)</select>', html, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"[^>]*selected', select) in ([], [""])  # no reason preselected
    assert select.lstrip().startswith('<option value=""')  # the empty choice shows first
    assert "doctrinalAccuracy" not in re.sub(r'name="gold_\w+"|id="id_gold_\w+"|for="id_gold_\w+[^"]*"', "", html)
    assert "Doctrinal accuracy" in html or "Doctrinal Accuracy" in html
    disagreement = re.search(r'data-testid="disagreement"><strong>([^<]+)</strong>', html).group(1)
    assert disagreement[0].isupper() and " " in disagreement  # a name, not a camelCase key
    scores = {f"gold_{k}": v for k, v in zip(DOCTRINAL, [1, 1, 2, 3], strict=True)}
    response = client.post(url, scores | {"note": ""})  # no reason: refused, with the reason field's own message
    assert response.status_code == 400
    assert response.context["form"].errors["reason"] == ["Choose the reason for this decision."]
    assert not AdjudicationDecision.objects.filter(item_id=items[0]).exists()
    client.post(url, scores | {"reason": "rubric_ambiguity", "note": ""})
    history = client.get(url).content.decode().split("<h2>Decisions</h2>", 1)[1]
    assert "doctrinalAccuracy" not in history and "The rubric is ambiguous here" in history


def test_key_label_spells_out_keys_the_rubric_does_not_name() -> None:
    from calibration.adjudication.selectors import key_label

    assert key_label("doctrinalAccuracy", {"doctrinalAccuracy": "Doctrinal Accuracy"}) == "Doctrinal Accuracy"
    assert key_label("nuanceRecognition", {}) == "Nuance Recognition"  # the rubric's name (evaluations.labels)
    assert key_label("newKey", {}) == "New key"
    assert key_label("source_grounding", {}) == "Source grounding"
