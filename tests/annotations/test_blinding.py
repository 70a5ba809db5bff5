"""Blinding is a security property: nothing an expert can reach reveals what they must not know.

Data-driven: `forbidden_markers()` lists every string the expert must never receive — model names,
providers and families; other people's emails, names, rationales and assignment ids; held-out text of
cases not assigned to them; reference answers when the cycle hides them. `MARKER_SOURCES` is the list
to extend: when judge results exist (evaluations/judge/), add a source that returns the judge model
names, reasoning texts and any other judge output seeded for the test (see `judge_markers`).
Then every page, fragment, action response and error page an expert can reach is requested, and
the bytes and headers of each response are searched for every marker.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from accounts.models import User
from annotations.models import Annotation, Assignment
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from evaluations.models import EvaluatedModel, TestCase, Visibility
from tests.annotations.factories import (
    HELD_OUT_MARKER,
    MODEL_NAME_MARKER,
    OTHER_RATIONALE_MARKER,
    REFERENCE_MARKER,
    World,
    world_build,
)
from tests.blinding import HX, Marker, leaks

pytestmark = pytest.mark.django_db


def model_markers(world: World) -> list[Marker]:
    """The evaluated models' names, providers and families."""
    markers = []
    for model in EvaluatedModel.objects.all():
        markers += [Marker("model name", model.name), Marker("model provider", model.provider),
                    Marker("model family", model.family)]
    return markers


def people_markers(world: World) -> list[Marker]:
    """Everyone else's identity, rationales and opaque assignment ids."""
    markers = []
    for user in User.objects.exclude(pk=world.expert.pk):
        markers.append(Marker("another person's email", user.email))
        if user.display_name:
            markers.append(Marker("another person's name", user.display_name))
    for rationale in Annotation.objects.exclude(assignment__expert=world.expert).exclude(rationale="") \
            .values_list("rationale", flat=True):
        markers.append(Marker("another expert's rationale", rationale))
    for public_id in Assignment.objects.exclude(expert=world.expert).values_list("public_id", flat=True):
        markers.append(Marker("another expert's assignment id", public_id))
    return markers


def content_markers(world: World) -> list[Marker]:
    """Held-out text of cases not assigned to the expert; reference answers the cycle hides."""
    markers = []
    assigned = set(Assignment.objects.filter(expert=world.expert).values_list("item__response__test_case", flat=True))
    for case in TestCase.objects.filter(visibility=Visibility.HELD_OUT).exclude(pk__in=assigned):
        markers.append(Marker("held-out case text", case.prompt))
    if not world.cycle.show_reference_answers:
        markers.append(Marker("hidden reference answer", REFERENCE_MARKER))
    return markers


JUDGE_MODEL_MARKER = "zqjudgevendor/zq-judge-4471"
JUDGE_REASONING_MARKER = "ZQ-JUDGE-REASONING-8830"
JUDGE_RAW_MARKER = "ZQ-JUDGE-RAW-OUTPUT-1207"


def judge_markers(world: World) -> list[Marker]:
    """Seed a finished judge run over every response of the world, with marked model, reasoning and raw text."""
    from decimal import Decimal

    from evaluations.models import JudgeResult, JudgeRun, JudgeScore, ModelResponse

    responses = list(ModelResponse.objects.select_related("test_case"))
    run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model=JUDGE_MODEL_MARKER,
                                  base_url="http://127.0.0.1:9/v1", status=JudgeRun.Status.FINISHED)
    for response in responses:
        result = JudgeResult.objects.create(
            run=run, response=response, judge_model=JUDGE_MODEL_MARKER, role="primary", status="scored",
            composite=Decimal("0.777777"), attempts=1, raw_response=f'{{"scores": []}} {JUDGE_RAW_MARKER}')
        JudgeScore.objects.create(result=result, sub_dimension="doctrinalAccuracy", raw_score=2,
                                  reasoning=f"{JUDGE_REASONING_MARKER} judged")
    JudgeRun.objects.filter(pk=run.pk).update(total_items=len(responses), processed_items=len(responses),
                                              scored_items=len(responses))
    return [Marker("judge model", JUDGE_MODEL_MARKER), Marker("judge reasoning", JUDGE_REASONING_MARKER),
            Marker("judge raw output", JUDGE_RAW_MARKER), Marker("judge composite", "0.777777")]


MARKER_SOURCES: list[Callable[[World], list[Marker]]] = [model_markers, people_markers, content_markers, judge_markers]


def forbidden_markers(world: World) -> list[Marker]:
    markers = [m for source in MARKER_SOURCES for m in source(world) if m.value]
    assert len(markers) >= 20, "the markers must be seeded for this test to mean anything"
    return markers


def parameterless_get_urls() -> list[str]:
    """Every URL of the project without parameters (other apps included), except the Django admin."""
    urls: list[str] = []

    def walk(patterns, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for p in patterns:
            route = str(p.pattern)
            if isinstance(p, URLResolver):
                if route.startswith("admin/"):
                    continue
                walk(p.url_patterns, prefix + route)
            elif isinstance(p, URLPattern) and "<" not in route and "(" not in route and "^" not in route:
                urls.append("/" + prefix + route)

    walk(get_resolver().url_patterns, "")
    return sorted(set(urls))


@pytest.fixture
def scene():  # type: ignore[no-untyped-def]
    """The world, with the other experts' submitted annotations (scores and marked rationales)."""
    world = world_build()
    for other in (world.other_expert, world.other_panel_expert):
        for assignment in Assignment.objects.filter(expert=other):
            keys = sub_dimension_keys(assignment=assignment)
            annotation_submit(assignment=assignment, actor=other, data=AnnotationInput(
                scores=dict.fromkeys(keys, 3), rationale=f"{OTHER_RATIONALE_MARKER} by {other.email}"))
    return world


def crawl_as_expert(world: World) -> list[tuple[str, object]]:
    """Request every page, fragment and action an expert can reach; returns (label, response)."""
    client = Client(raise_request_exception=False)
    client.force_login(world.expert)
    seen: list[tuple[str, object]] = []

    def get(path: str, **headers: str) -> None:
        seen.append((f"GET {path} {headers}", client.get(path, **headers)))

    def post(path: str, data: dict | None = None, **headers: str) -> None:
        seen.append((f"POST {path} {headers}", client.post(path, data or {}, **headers)))

    mine = world.assignments(world.expert)
    theirs = Assignment.objects.exclude(expert=world.expert).first()

    def a(name: str, assignment: Assignment) -> str:
        return reverse(f"annotations:{name}", kwargs={"public_id": assignment.public_id})

    # Pages and fragments before submission.
    for path in parameterless_get_urls():
        get(path)
        get(path, **HX)
    get(reverse("annotations:queue") + "?page=2")
    seen.append(("GET next (followed)", client.get(reverse("annotations:next"), follow=True)))
    for assignment in mine:
        get(a("item", assignment))
        get(a("item", assignment), **HX)
    first, second = mine[0], mine[1]
    keys = sub_dimension_keys(assignment=first)
    # Actions: autosave, heartbeat, invalid submit (422), submit (→ next item), the locked view, 409s, skip.
    post(a("draft", first), {f"score-{keys[0]}": "3", "rationale": "my own draft"}, **HX)
    post(a("heartbeat", first), {"seconds": "10"})
    post(a("submit", first), {f"score-{keys[0]}": "0"}, **HX)
    post(a("submit", first), {**{f"score-{k}": "3" for k in keys}, "rationale": "mine"}, **HX)
    get(a("item", first))
    get(a("item", first), **HX)
    post(a("submit", first), {f"score-{k}": "2" for k in keys}, **HX)
    post(a("draft", first), {f"score-{k}": "2" for k in keys}, **HX)
    post(a("skip", second), **HX)
    post(a("skip", second))
    get(reverse("annotations:queue"))
    # Error pages: another expert's assignment, unknown paths, forbidden pages, wrong methods.
    for name in ("item", "draft", "heartbeat", "submit", "skip", "reopen", "reassign"):
        (get if name == "item" else post)(a(name, theirs))
    get(a("reassign", theirs))
    get("/scoring/a/" + "x" * 22 + "/")
    get("/no-such-page/")
    get(a("draft", first))  # 405
    for path in ("/calibration/", "/calibration/cycles/draw/", "/calibration/progress/", "/scoring/lead/",
                 f"/calibration/cycles/{world.cycle.pk}/", "/admin/", "/admin/evaluations/evaluatedmodel/"):
        get(path)
    for path in ("/accounts/profile/", "/accounts/email/", "/accounts/2fa/", "/accounts/password/change/"):
        get(path)
    # Judge, report, adjudication and API pages: all refused to experts, and the refusals leak nothing.
    pk = world.cycle.pk
    for path in ("/judge/runs/", "/judge/leaderboard/", "/api/v1/leaderboard/",
                 "/api/v1/gold-labels/", f"/api/v1/reports/cycles/{pk}/", f"/calibration/cycles/{pk}/report/",
                 f"/calibration/cycles/{pk}/report.json", f"/calibration/cycles/{pk}/report.csv",
                 f"/calibration/cycles/{pk}/gold/", "/calibration/adjudication/", "/api/v1/schema/"):
        get(path)
    for assignment in mine:
        get(reverse("calibration:adjudication_item", kwargs={"item_id": assignment.item_id}))
    return seen


def test_an_expert_never_receives_model_judge_or_other_expert_information(scene) -> None:  # type: ignore[no-untyped-def]
    markers = forbidden_markers(scene)
    responses = crawl_as_expert(scene)
    assert len(responses) > 40
    found = [f"{label} → {leak}" for label, response in responses for leak in leaks(response, markers)]
    assert found == [], "\n" + "\n".join(found)
    errors = [label for label, response in responses if response.status_code >= 500]
    assert errors == []


def test_the_markers_would_be_found_where_they_are_allowed(scene, client) -> None:  # type: ignore[no-untyped-def]
    """Control: admins do see model names, so the search above is able to fail."""
    client.force_login(scene.admin)
    response = client.post(reverse("calibration:draw"), {
        "name": "control", "seed": "1", "min_per_dimension": "5", "refresh_fraction": "0.25",
        "edge_fraction": "0.1", "action": "preview"})
    assert any(MODEL_NAME_MARKER in leak for leak in leaks(response, forbidden_markers(scene)))
    markers = forbidden_markers(scene)
    runs = client.get("/judge/runs/")
    assert any("zq-judge-4471" in leak for leak in leaks(runs, markers)), "judge markers must be findable"


def test_held_out_text_reaches_only_the_assigned_experts(scene) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(scene.other_panel_expert)
    held_out = Assignment.objects.get(expert=scene.other_panel_expert,
                                      item__response__test_case__visibility=Visibility.HELD_OUT,
                                      item__response__model__name=MODEL_NAME_MARKER)
    page = client.get(reverse("annotations:item", kwargs={"public_id": held_out.public_id}))
    assert HELD_OUT_MARKER in page.content.decode()
    client.force_login(scene.expert)
    assert client.get(reverse("annotations:item", kwargs={"public_id": held_out.public_id})).status_code == 404


def test_reference_answers_appear_only_when_the_cycle_enables_them(db) -> None:  # type: ignore[no-untyped-def]
    world = world_build(show_reference_answers=True)
    client = Client()
    client.force_login(world.expert)
    page = client.get(reverse("annotations:item", kwargs={"public_id": world.assignments(world.expert)[0].public_id}))
    assert REFERENCE_MARKER in page.content.decode()


PREVIOUS_RATER_NOTE_MARKER = "ZQ-PREVIOUS-RATER-BROKEN-NOTE-5150"


def test_a_reassigned_item_shows_the_new_rater_nothing_of_the_previous_raters_work(db) -> None:  # type: ignore[no-untyped-def]
    """The lead hands two of another expert's drafted items to a newcomer; the newcomer's whole crawl
    (pages, fragments, actions, error pages) carries no trace of the previous rater or their draft."""
    import dataclasses

    from annotations.lifecycle import assignment_reassign
    from annotations.services import annotation_draft_save
    from tests.annotations.factories import person, tradition

    world = world_build()
    newcomer = person(tradition=tradition("catholic"), name="Nina Newcomer", email="nina@faithbench.test")
    world.catholic.members.add(newcomer)
    previous = list(Assignment.objects.filter(expert=world.other_expert, panel=world.catholic).order_by("position"))[:2]
    for assignment in previous:
        keys = sub_dimension_keys(assignment=assignment)
        annotation_draft_save(assignment=assignment, actor=world.other_expert, data=AnnotationInput(
            scores=dict.fromkeys(keys, 3), rationale=f"{OTHER_RATIONALE_MARKER} draft by {world.other_expert.email}",
            flagged_broken=True, broken_note=PREVIOUS_RATER_NOTE_MARKER))
        assignment_reassign(assignment=assignment, to_expert=newcomer, actor=world.lead)
    as_newcomer = dataclasses.replace(world, expert=newcomer)
    markers = forbidden_markers(as_newcomer) + [Marker("previous rater's broken-item note", PREVIOUS_RATER_NOTE_MARKER)]
    assert {m.value for m in markers} >= {a.public_id for a in previous}

    client = Client()
    client.force_login(newcomer)
    for assignment in as_newcomer.assignments(newcomer):
        page = client.get(reverse("annotations:item", kwargs={"public_id": assignment.public_id})).content.decode()
        # The previous rater's scores (all 3) are not pre-filled: the form starts empty.
        assert " checked" not in page and 'class="subdim scored"' not in page
        assert "Flag this item as broken" in page and 'name="flagged_broken" checked' not in page

    responses = crawl_as_expert(as_newcomer)
    found = [f"{label} → {leak}" for label, response in responses for leak in leaks(response, markers)]
    assert found == [], "\n" + "\n".join(found)
    assert [label for label, response in responses if response.status_code >= 500] == []


def test_the_refusals_of_a_closed_cycle_leak_nothing_either(scene) -> None:  # type: ignore[no-untyped-def]
    """Every 409 page of a closed cycle (autosave, submit, skip) is searched like the rest."""
    from annotations.lifecycle import cycle_close

    cycle_close(cycle=scene.cycle, actor=scene.admin, reason="end of the round")
    markers = forbidden_markers(scene)
    responses = crawl_as_expert(scene)
    assert sum(response.status_code == 409 for _, response in responses) >= 4
    found = [f"{label} → {leak}" for label, response in responses for leak in leaks(response, markers)]
    assert found == [], "\n" + "\n".join(found)


REVIEW_COMMENT_MARKER = "ZQ-OTHER-REVIEW-COMMENT-5310"


def test_case_review_pages_leak_nothing_either(scene) -> None:  # type: ignore[no-untyped-def]
    """The same search over everything an expert reaches in test-case review: their review list, each case to
    review, submitting, and the refusals (another reviewer's review, the lead's pages, the TheoBERT audit and
    difficulty pages). The reference answer is shown there on purpose (it is what they review), so the hidden
    reference marker of the scoring cycle is not searched for; everything else is, plus the other reviewers'
    comments and review ids, and the text of held-out cases the expert was not given to review."""
    from casereview.models import CaseReview
    from casereview.rules import ReviewAnswers
    from casereview.services import case_review_submit, review_cycle_open

    world = scene
    CaseReview.objects.all().delete()
    cycle = review_cycle_open(panel=world.catholic, name="Blinding review", user=world.lead)
    for review in CaseReview.objects.filter(cycle=cycle).exclude(expert=world.expert):
        case_review_submit(review=review, user=review.expert, answers=ReviewAnswers(
            valid="no", reference_correct="no", difficulty="expert", clarity=0,
            comment=f"{REVIEW_COMMENT_MARKER} by {review.expert.email}"))
    markers = [m for m in forbidden_markers(world) if m.what != "hidden reference answer"]
    markers.append(Marker("another reviewer's comment", REVIEW_COMMENT_MARKER))
    markers += [Marker("another reviewer's review id", p)
                for p in CaseReview.objects.exclude(expert=world.expert).values_list("public_id", flat=True)]
    reviewed = set(CaseReview.objects.filter(expert=world.expert).values_list("test_case", flat=True))
    markers += [Marker("held-out case text not under review", c.prompt)
                for c in TestCase.objects.filter(visibility=Visibility.HELD_OUT).exclude(pk__in=reviewed)]
    client = Client(raise_request_exception=False)
    client.force_login(world.expert)
    seen = []
    mine = list(CaseReview.objects.filter(expert=world.expert))
    theirs = CaseReview.objects.exclude(expert=world.expert).first()
    assert mine and theirs is not None
    for path in ("/review/", "/review/cycles/", f"/review/cycles/{cycle.pk}/", "/review/theobert/",
                 "/review/difficulty/", f"/review/cases/{theirs.test_case_id}/history/",
                 reverse("review:case", args=[theirs.public_id])):
        seen.append((f"GET {path}", client.get(path)))
    for review in mine:
        url = reverse("review:case", args=[review.public_id])
        seen.append((f"GET {url}", client.get(url)))
        seen.append((f"POST {url} (incomplete)", client.post(url, {"valid": "yes"})))
        seen.append((f"POST {url}", client.post(url, {"valid": "yes", "reference_correct": "yes",
                                                      "difficulty": "medium", "clarity": "3"}, follow=True)))
        seen.append((f"GET {url} (submitted)", client.get(url)))
    seen.append(("POST theirs", client.post(reverse("review:case", args=[theirs.public_id]), {"valid": "yes"})))
    found = [f"{label} → {leak}" for label, response in seen for leak in leaks(response, markers)]
    assert found == [], "\n" + "\n".join(found)
    assert [label for label, response in seen if response.status_code >= 500] == []
    # control: the lead's flag page does show the other reviewers' comments, so the search can fail
    lead = Client()
    lead.force_login(world.lead)
    flag = cycle.flags.first()
    assert flag is not None
    assert leaks(lead.get(reverse("review:flag", args=[flag.pk])), markers)
