"""Demo Delphi studies: one per tradition with a panel, on the active rubric, round 1 open (idempotent)."""
from __future__ import annotations

from django.db import transaction

from annotations.models import Panel
from evaluations.selectors import rubric_active

from ..models import DelphiStudy
from .services import delphi_study_create


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
            continue
        if not panel.members.exists():
            continue
        result = delphi_study_create(name=name, rubric=rubric, panel=panel, created_by=admin)
        studies.append(result.study)
    return studies
