"""The demo Delphi studies: one per tradition panel, round 1 open, idempotent."""
from __future__ import annotations

import pytest

from annotations.models import Panel
from calibration.delphi.demo import demo_delphi_create
from calibration.delphi.selectors import study_warnings
from calibration.demo import demo_people_create
from calibration.models import DelphiStudy

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
