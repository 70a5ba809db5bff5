"""The demo Delphi studies: one per tradition panel, round 1 open, idempotent."""
from __future__ import annotations

import pytest

from annotations.models import Panel
from calibration.demo import demo_people_create
from delphi.demo import demo_delphi_create
from delphi.models import DelphiStudy
from delphi.selectors import study_warnings

pytestmark = pytest.mark.django_db


def test_demo_creates_a_study_per_tradition_with_round_1_open() -> None:
    demo_people_create()
    studies = demo_delphi_create()
    assert len(studies) == 5 == DelphiStudy.objects.count()
    for study in studies:
        panel = Panel.objects.get(tradition=study.tradition)
        assert set(study.panelists.all()) == set(panel.members.all())
        assert list(study.rounds.values_list("number", "status")) == [(1, "open")]
        assert study.rubric.version == "1.0" and study.planned_rounds == 3
        assert study_warnings(study=study)  # the demo panels have 2–3 experts, below the methodology's 5
    assert [s.pk for s in demo_delphi_create()] == [s.pk for s in studies]  # idempotent
    assert DelphiStudy.objects.count() == 5


def test_one_demo_study_has_round_1_answered_so_that_closing_it_works(client) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.messages import get_messages
    from django.urls import reverse

    from accounts.models import User
    from delphi.demo import ANSWERED_TRADITION, demo_round_answers_create
    from delphi.models import DelphiAllocation, DelphiResponse
    from delphi.selectors import weight_structure

    demo_people_create()
    studies = demo_delphi_create()
    answered = [s for s in studies if s.rounds.get(number=1).responses.exists()]
    assert [s.tradition.key for s in answered] == [ANSWERED_TRADITION]
    study = answered[0]
    panelists = list(study.panelists.order_by("email"))
    responses = DelphiResponse.objects.filter(round__study=study)
    assert len(panelists) == 3 and responses.count() == 2  # all but one: someone is left to answer in the tour
    assert panelists[-1].pk not in set(responses.values_list("expert_id", flat=True))
    structure = weight_structure(rubric=study.rubric)
    for response in responses:  # each a valid allocation: every level totals 100 (the service checked it too)
        points = dict(DelphiAllocation.objects.filter(response=response).values_list("key", "points"))
        assert set(points) == {f.key for f in structure.fields}
        for group in structure.groups:
            assert sum(points[key] for key in group.keys) == 100
    first, second = (dict(DelphiAllocation.objects.filter(response=r).values_list("key", "points")) for r in responses)
    assert first != second  # a spread for the round's statistics
    assert demo_round_answers_create(study=study) == 0 and responses.count() == 2  # idempotent
    assert demo_delphi_create() and responses.count() == 2

    # The tour's step: the admin closes round 1 on the study's page.
    admin = User.objects.get(email="admin@faithbench.test")
    client.force_login(admin)
    response = client.post(reverse("delphi:round_close", args=[study.pk, 1]))
    assert response.status_code == 302
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("Round 1 closed: 2 of 3 panelists answered" in m for m in shown), shown
    assert list(study.rounds.order_by("number").values_list("number", "status")) == [(1, "closed"), (2, "open")]
    # a later load_demo does not answer round 2 for the panel
    demo_delphi_create()
    assert not study.rounds.get(number=2).responses.exists()
