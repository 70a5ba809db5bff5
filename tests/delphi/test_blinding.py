"""Blinding in Delphi: an expert never receives another expert's identity, a named allocation, or judge data.

Every page, action response and error page a panelist can reach is requested at each stage of a study
(round 1 open, round 2 with feedback, closed, approved with judge re-scoring), and the bytes and headers
of each response are searched for every other person's name and email, the evaluated models' names
and the judge's reasoning. Other panelists' rationales are shown on purpose (anonymised); they are
seeded without names. A control test shows the same markers on the admin's pages, so the search can fail.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from delphi.services import (
    delphi_proposal_approve,
    delphi_response_submit,
    delphi_study_close,
    delphi_study_create,
)
from evaluations.models import EvaluatedModel
from tests.blinding import HX, Marker, leaks
from tests.delphi.factories import (
    OTHER_EMAIL,
    RATIONALE_MARKER,
    DelphiWorld,
    allocation,
    close,
    delphi_world_build,
    form_data,
    submit_all,
)
from tests.delphi.judge_data import JUDGE_REASONING_MARKER, judge_run_seed

pytestmark = pytest.mark.django_db


def forbidden_markers(world: DelphiWorld) -> list[Marker]:
    markers = []
    for user in User.objects.exclude(pk=world.expert.pk):
        markers.append(Marker("another person's email", user.email))
        if user.display_name:
            markers.append(Marker("another person's name", user.display_name))
    for model in EvaluatedModel.objects.all():
        markers += [Marker("model name", model.name), Marker("model provider", model.provider)]
    markers.append(Marker("judge reasoning", JUDGE_REASONING_MARKER))
    assert len([m for m in markers if "Zq Delphiother" in m.value]) == 4, "the markers must be seeded"
    return markers


@pytest.fixture
def scene() -> tuple[DelphiWorld, int]:
    """The world with judge results, and a second study the expert is not on (its panelists are marked too)."""
    world = delphi_world_build()
    judge_run_seed(rubric=world.rubric)
    other_study = delphi_study_create(name="Orthodox weights", rubric=world.rubric, panelists=[world.outsider,
                                                                                                *world.others])
    return world, other_study.study.pk


def crawl(world: DelphiWorld, other_study: int) -> list[tuple[str, object]]:
    client = Client(raise_request_exception=False)
    client.force_login(world.expert)
    seen: list[tuple[str, object]] = []
    pk = world.study.pk

    def get(path: str, **headers: str) -> None:
        seen.append((f"GET {path} {headers}", client.get(path, **headers)))

    def post(path: str, data: dict | None = None, follow: bool = False) -> None:
        seen.append((f"POST {path}", client.post(path, data or {}, follow=follow)))

    def pages() -> None:
        for path in (reverse("delphi:index"), reverse("delphi:study", args=[pk]), reverse("delphi:respond", args=[pk])):
            get(path)
            get(path, **HX)

    def forbidden() -> None:
        for name in ("report_json", "study", "respond"):
            get(reverse(f"delphi:{name}", args=[other_study]))
        get(reverse("delphi:report_json", args=[pk]))
        get(reverse("delphi:create"))
        for name, kwargs in (("round_close", {"number": 1}), ("round_close", {"number": 2}), ("study_close", {}),
                             ("approve", {}), ("rescore", {})):
            post(reverse(f"delphi:{name}", kwargs={"pk": pk, **kwargs}))
            post(reverse(f"delphi:{name}", kwargs={"pk": other_study, **kwargs}))
        get(reverse("delphi:round_close", kwargs={"pk": pk, "number": 1}))  # 405
        get("/delphi/999999/")

    valid = form_data(world.structure, allocation(world.structure, shift=3, rationale="my own reason"))
    # Stage 1: round 1 open, the four others answered with rationales.
    for user, shift in zip(world.others, (-15, -5, 5, 15), strict=True):
        delphi_response_submit(round=world.round(1), expert=user, allocation=allocation(
            world.structure, shift=shift, rationale=f"{RATIONALE_MARKER} {shift}"))
    pages()
    post(reverse("delphi:respond", args=[pk]), {**valid, "w__textual": "12.25"})
    post(reverse("delphi:respond", args=[pk]), valid, follow=True)
    pages()
    forbidden()
    # Stage 2: round 1 closed → round 2 with the group feedback.
    close(world.round(1), world)
    pages()
    post(reverse("delphi:respond", args=[pk]), {**valid, "w__doctrinal": "-1"})
    post(reverse("delphi:respond", args=[pk]), valid, follow=True)
    submit_all(world, world.round(2), [0, -1, 1, 2, -2])
    # Stage 3: round 2 closed; the study converged, closed and approved (with the judge re-scoring).
    close(world.round(2), world)
    pages()
    delphi_study_close(study=world.study, actor=world.admin)
    pages()
    delphi_proposal_approve(study=world.study, actor=world.admin)
    pages()
    post(reverse("delphi:respond", args=[pk]), valid)  # no open round: 409
    forbidden()
    return seen


def test_an_expert_never_receives_another_experts_identity_or_judge_data(scene) -> None:  # type: ignore[no-untyped-def]
    world, other_study = scene
    responses = crawl(world, other_study)
    markers = forbidden_markers(world)
    assert len(responses) > 50
    found = [f"{label} → {leak}" for label, response in responses for leak in leaks(response, markers)]
    assert found == [], "\n" + "\n".join(found)
    assert [label for label, r in responses if r.status_code >= 500] == []
    # The anonymised feedback was on the pages (the crawl reached round 2), with nobody's name attached.
    feedback = [r for label, r in responses if "respond" in label and RATIONALE_MARKER.encode() in r.content]
    assert feedback, "the round-2 page must show the anonymised rationales"
    statuses = {label: r.status_code for label, r in responses}
    assert statuses[f"GET /delphi/{other_study}/ {{}}"] == 404
    assert statuses[f"GET /delphi/{world.study.pk}/report.json {{}}"] == 403


def test_the_markers_are_on_the_admins_pages(scene) -> None:  # type: ignore[no-untyped-def]
    """Control: admins see names, emails and model names, so the search above is able to fail."""
    world, _ = scene
    submit_all(world, world.round(1), [-15, -5, 5, 15, 0])
    close(world.round(1), world)
    delphi_study_close(study=world.study)
    client = Client()
    client.force_login(world.admin)
    markers = forbidden_markers(world)
    page = client.get(reverse("delphi:study", args=[world.study.pk]))
    found = leaks(page, markers)
    assert any(OTHER_EMAIL.format(n=1) in leak for leak in found)
    assert any("zqdelphi/model-alpha" in leak for leak in found)
    report = client.get(reverse("delphi:report_json", args=[world.study.pk]))
    assert any("Zq Delphiother Namemarker 2" in leak for leak in leaks(report, markers))
