"""Panels by tradition × language (issue 35 §3): a panel can carry a language; a tradition's case in that language
goes to its language panel, every other language to the tradition's panel without one, and a panel's language
restricts its items — on top of each expert's own scoring languages."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.models import ExpertProfile
from annotations.models import Assignment, Panel
from calibration.cycles.services import cycle_assignments_create
from evaluations.models import TestCase

from .factories import person, world_build

pytestmark = pytest.mark.django_db


def test_panel_language_routes_a_traditions_cases_by_language() -> None:
    world = world_build(catholic_cases=3)
    spanish_case = TestCase.objects.filter(tradition__key="catholic").order_by("pk").first()
    TestCase.objects.filter(pk=spanish_case.pk).update(language="es-419")
    catholic = world.catholic.tradition
    members = [person(tradition=catholic, name=f"Experta {i}") for i in range(3)]
    ExpertProfile.objects.filter(user__in=members).update(scoring_languages=["es"])
    ExpertProfile.objects.filter(user=world.expert).update(scoring_languages=["en", "es"])  # on both panels
    spanish = Panel.objects.create(name="Catholic panel (Spanish)", tradition=catholic, language="es",
                                   lead=world.lead)
    spanish.members.set(members)
    Assignment.objects.filter(cycle=world.cycle).delete()
    cycle_assignments_create(cycle=world.cycle)

    on_spanish = Assignment.objects.filter(cycle=world.cycle, panel=spanish)
    assert set(on_spanish.values_list("item__response__test_case__language", flat=True)) == {"es-419"}
    assert set(on_spanish.values_list("expert", flat=True)) == {m.pk for m in members}
    # the English panel keeps its English cases and no longer gets the Spanish one, though Alice reads Spanish
    english = Assignment.objects.filter(cycle=world.cycle, panel=world.catholic)
    assert english.exists() and not english.filter(item__response__test_case=spanish_case).exists()


def test_panel_language_restricts_a_neutral_panels_items() -> None:
    world = world_build()
    neutral = world.cycle.neutral_panel
    Panel.objects.filter(pk=neutral.pk).update(language="ko")
    ExpertProfile.objects.filter(user__in=neutral.members.all()).update(scoring_languages=["en", "ko"])
    Assignment.objects.filter(cycle=world.cycle).delete()
    report = cycle_assignments_create(cycle=world.cycle)
    assert not Assignment.objects.filter(cycle=world.cycle, panel=neutral).exists()  # its cases are English
    assert any("scores only Korean (ko)" in note for note in report.notes)
    TestCase.objects.filter(tradition__isnull=True).update(language="ko")
    cycle_assignments_create(cycle=world.cycle)
    assert Assignment.objects.filter(cycle=world.cycle, panel=neutral).exists()


def test_panel_language_tag_is_checked_and_one_panel_per_tradition_and_language() -> None:
    world = world_build()
    panel = Panel(name="Bad", tradition=None, language="xx-nonsense")
    with pytest.raises(ValidationError) as caught:
        panel.full_clean()
    assert "language" in caught.value.message_dict
    regional = Panel(name="Regional", tradition=None, language="es-MX")
    regional.full_clean()
    assert regional.language == "es"
    Panel.objects.create(name="Catholic (es)", tradition=world.catholic.tradition, language="es")
    with pytest.raises(IntegrityError), transaction.atomic():
        Panel.objects.create(name="Catholic (es) again", tradition=world.catholic.tradition, language="es")
