"""A small Delphi world built through the real services, with identity markers that must never leak.

The Catholic study has five panelists (the methodology's minimum): `expert` — whose pages the tests
render — and four others whose names and emails are distinctive markers. An Orthodox expert, the
Catholic panel's lead (an adjudicator) and an admin are not panelists.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from accounts.models import User
from annotations.models import Panel
from delphi.allocation import AllocationInput
from delphi.models import DelphiRound, DelphiStudy
from delphi.selectors import WeightStructure, weight_structure
from delphi.services import delphi_response_submit, delphi_round_close, delphi_study_create
from evaluations.models import RubricVersion, Tradition
from tests.annotations.factories import person

OTHER_NAME = "Zq Delphiother Namemarker {n}"
OTHER_EMAIL = "zq.delphi.other{n}.4471@example.org"
RATIONALE_MARKER = "ZQ-DELPHI-RATIONALE-8123"


@dataclass
class DelphiWorld:
    rubric: RubricVersion
    structure: WeightStructure
    expert: User            # a panelist (the viewer)
    others: list[User]      # the other four panelists, with marker identities
    outsider: User          # an expert of another tradition, not on the study
    adjudicator: User       # the Catholic panel's lead, not a panelist
    admin: User
    panel: Panel
    study: DelphiStudy

    @property
    def panelists(self) -> list[User]:
        return [self.expert, *self.others]

    def round(self, number: int) -> DelphiRound:
        return self.study.rounds.get(number=number)


def allocation(structure: WeightStructure, *, shift: Decimal | int | str = 0, rationale: str = "",
               overrides: dict[str, Decimal] | None = None) -> AllocationInput:
    """The rubric's own weights, with `shift` points moved from the 2nd to the 1st weight of every group."""
    shift = Decimal(str(shift))
    points = {f.key: Decimal(f.current).quantize(Decimal("0.1")) for f in structure.fields}
    for group in structure.groups:
        first, second = group.keys[0], group.keys[1]
        points[first] += shift
        points[second] -= shift
    points.update(overrides or {})
    rationales = {group.keys[0]: rationale for group in structure.groups} if rationale else {}
    return AllocationInput(points=points, rationales=rationales)


def form_data(structure: WeightStructure, alloc: AllocationInput) -> dict[str, str]:
    """The POST data of an allocation, as the form sends it."""
    data = {f.field: f"{alloc.points[f.key]:f}" for f in structure.fields}
    data.update({f.rationale_field: alloc.rationales.get(f.key, "") for f in structure.fields})
    return data


def submit_all(world: DelphiWorld, round: DelphiRound, shifts: list[int | str], *, rationale: bool = True) -> None:
    """Every panelist in order submits the rubric's weights with their shift."""
    for user, shift in zip(world.panelists, shifts, strict=False):
        text = f"{RATIONALE_MARKER} shift {shift}" if rationale else ""
        delphi_response_submit(round=round, expert=user, allocation=allocation(world.structure, shift=shift,
                                                                               rationale=text))


def delphi_world_build(*, planned_rounds: int = 3) -> DelphiWorld:
    catholic, orthodox = Tradition.objects.get(key="catholic"), Tradition.objects.get(key="orthodox")
    rubric = RubricVersion.objects.get(version="1.0")
    expert = person(tradition=catholic, name="Alice Delphi", email="alice.delphi@faithbench.test")
    others = [person(tradition=catholic, name=OTHER_NAME.format(n=n), email=OTHER_EMAIL.format(n=n))
              for n in range(1, 5)]
    outsider = person(tradition=orthodox, name="Olga Outsider", email="olga.outsider@faithbench.test")
    adjudicator = person(User.Role.ADJUDICATOR, tradition=catholic, name="Larry Lead", email="larry.lead@faithbench.test")
    admin = person(User.Role.ADMIN, name="Ada Admin", email="ada.admin@faithbench.test")
    panel = Panel.objects.create(name="Catholic panel", tradition=catholic, lead=adjudicator)
    panel.members.set([expert, *others])
    result = delphi_study_create(name="Catholic weights", rubric=rubric, panel=panel, planned_rounds=planned_rounds,
                                 created_by=admin)
    return DelphiWorld(rubric=rubric, structure=weight_structure(rubric=rubric), expert=expert, others=others,
                       outsider=outsider, adjudicator=adjudicator, admin=admin, panel=panel, study=result.study)


def close(round: DelphiRound, world: DelphiWorld):  # type: ignore[no-untyped-def]
    return delphi_round_close(round=round, actor=world.admin)


@pytest.fixture
def dworld(db) -> DelphiWorld:  # type: ignore[no-untyped-def]
    return delphi_world_build()
