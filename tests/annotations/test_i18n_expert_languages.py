"""Experts by language (issue 35 §3): assignments give an expert only cases in the languages they score; an expert who
lists none is English-only, and the admin says so."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts.models import ExpertProfile
from annotations.lifecycle import assignment_reassign
from annotations.models import Assignment
from calibration.cycles.services import cycle_assignments_create
from evaluations.models import TestCase

from .factories import world_build

pytestmark = pytest.mark.django_db


def _set_languages(user, tags):  # type: ignore[no-untyped-def]
    ExpertProfile.objects.filter(user=user).update(scoring_languages=tags)


def test_i18n_assignments_follow_the_experts_languages():  # type: ignore[no-untyped-def]
    world = world_build()
    spanish_case = TestCase.objects.filter(tradition__key="catholic").order_by("pk").first()
    assert spanish_case is not None
    # Make one Catholic case Spanish and redo the cycle's assignments from scratch.
    TestCase.objects.filter(pk=spanish_case.pk).update(language="es-MX")
    Assignment.objects.filter(cycle=world.cycle).delete()
    _set_languages(world.expert, ["en", "es"])         # scores both
    _set_languages(world.other_expert, ["de"])         # German only: none of these cases
    report = cycle_assignments_create(cycle=world.cycle)   # the third Catholic expert lists none: English only

    def cases_of(user):  # type: ignore[no-untyped-def]
        return set(Assignment.objects.filter(expert=user, cycle=world.cycle)
                   .values_list("item__response__test_case__language", flat=True))

    assert cases_of(world.expert) == {"en", "es-MX"}
    assert cases_of(world.other_expert) == set()
    third = world.catholic.members.exclude(pk__in=[world.expert.pk, world.other_expert.pk]).get()
    assert cases_of(third) == {"en"}
    assert report.assignments == Assignment.objects.filter(cycle=world.cycle).count()

    # Reassigning the Spanish item to the English-only expert is refused, naming the language.
    spanish = Assignment.objects.filter(expert=world.expert, item__response__test_case=spanish_case).first()
    with pytest.raises(ValidationError, match=r"does not score cases in Spanish \(es-MX\)"):
        assignment_reassign(assignment=spanish, to_expert=third, actor=world.lead)


def test_i18n_admin_warns_about_experts_without_languages(client, world):  # type: ignore[no-untyped-def]
    _set_languages(world.expert, ["en"])
    client.force_login(world.admin)
    page = client.get(reverse("admin:accounts_expertprofile_changelist"), follow=True)
    text = page.content.decode()
    assert "treated as English-only" in text
    assert "Olga Orthodox" in text and "Alice Expert" not in text.split("treated as English-only")[1].split("</li>")[0]
