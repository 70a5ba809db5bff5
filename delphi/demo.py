"""Demo Delphi studies: one per tradition with a panel, on the active rubric, round 1 open (idempotent). In one of
them (the Reformed panel's) all panelists but one have answered round 1, so that the tour's "close round 1" has
answers to summarise, and one panelist is left to answer it in the browser."""
from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from annotations.models import Panel
from evaluations.selectors import rubric_active

from .allocation import HUNDRED, AllocationInput
from .models import DelphiStudy
from .selectors import WeightStructure, round_open, weight_structure
from .services import delphi_response_submit, delphi_study_create

ANSWERED_TRADITION = "reformed"  # the demo study whose round 1 is answered by all its panelists but one
# Each demo panelist moves points between two weights of every level: the round has a spread, some weights do not
# converge (IQR ≥ 10) and closing round 1 opens round 2 with feedback.
SHIFTS = (0, 24, -16, 30, -20)


def demo_study_name(tradition_name: str) -> str:
    return f"Delphi weights · {tradition_name}"


@transaction.atomic
def demo_delphi_create() -> list[DelphiStudy]:
    """A study per tradition panel (its members as panelists, 3 rounds, IQR < 10), round 1 open; returns them."""
    from accounts.models import User

    rubric = rubric_active()
    admin = User.objects.filter(is_staff=True).order_by("pk").first()
    studies = []
    for panel in Panel.objects.filter(tradition__isnull=False).select_related("tradition"):
        assert panel.tradition is not None  # filtered above
        name = demo_study_name(panel.tradition.name)
        existing = DelphiStudy.objects.filter(name=name).first()
        if existing is not None:
            studies.append(existing)
            if panel.tradition.key == ANSWERED_TRADITION:
                demo_round_answers_create(study=existing)  # a demo loaded before the answers existed
            continue
        if not panel.members.exists():
            continue
        result = delphi_study_create(name=name, rubric=rubric, panel=panel, created_by=admin)
        studies.append(result.study)
        if panel.tradition.key == ANSWERED_TRADITION:
            demo_round_answers_create(study=result.study)
    return studies


def demo_allocation(structure: WeightStructure, index: int) -> AllocationInput:
    """A valid allocation near the rubric's current weights: every level totals exactly 100 whole points, and
    panelist `index` moves SHIFTS[index] points from one weight of each level to the next one."""
    points: dict[str, Decimal] = {}
    for group in structure.groups:
        current = {f.key: f.current for f in structure.fields if f.key in group.keys}
        total = sum(current.values(), Decimal("0")) or Decimal("1")
        exact = {key: HUNDRED * value / total for key, value in current.items()}
        whole = {key: Decimal(int(value)) for key, value in exact.items()}
        # largest remainders get the points lost by rounding down, so the level totals 100
        for key in sorted(exact, key=lambda k: exact[k] - whole[k], reverse=True)[:int(HUNDRED - sum(whole.values()))]:
            whole[key] += 1
        keys = list(group.keys)
        if len(keys) >= 2:
            shift = SHIFTS[index % len(SHIFTS)]
            giver, taker = keys[index % len(keys)], keys[(index + 1) % len(keys)]
            if shift < 0:
                giver, taker, shift = taker, giver, -shift
            moved = min(Decimal(shift), whole[giver])
            whole[giver] -= moved
            whole[taker] += moved
        points.update(whole)
    return AllocationInput(points=points, rationales={structure.dimensions[0].key: "Demo answer: close to the "
                                                      "methodology's weights."})


def demo_round_answers_create(*, study: DelphiStudy) -> int:
    """Answer round 1 for every panelist of `study` but the last (by e-mail), unless round 1 is closed or has answers
    already; returns how many answered."""
    round = round_open(study=study)
    if round is None or round.number != 1 or round.responses.exists():
        return 0
    structure = weight_structure(rubric=study.rubric)
    panelists = list(study.panelists.order_by("email"))
    for index, expert in enumerate(panelists[:-1]):
        delphi_response_submit(round=round, expert=expert, allocation=demo_allocation(structure, index))
    return max(0, len(panelists) - 1)
