"""The case-review pages an expert sees, in the accented pseudo-locale (issue 35 §1): the queue, a case to review
(the form) and a submitted review carry no English outside the catalogue."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from annotations.models import Panel
from casereview.models import CaseReview
from casereview.rules import ReviewAnswers
from casereview.services import case_review_submit, review_cycle_open
from config.catalogues import PSEUDO_ACCENTED
from evaluations.models import TestCase, Tradition
from tests.annotations.factories import CaseFactory, person, tradition

from .pseudo import unmarked_strings

pytestmark = pytest.mark.django_db


def test_i18n_pseudo_locale_crawl_of_the_case_review_pages(pseudo_settings):  # type: ignore[no-untyped-def]
    catholic = tradition("catholic")
    lead = person(User.Role.ADJUDICATOR, tradition=catholic, name="Lena Lead")
    panel = Panel.objects.create(name="Catholic panel", tradition=catholic, lead=lead)
    panel.members.set([person(tradition=catholic, name=f"Rev Zq{i}", email=f"rev{i}@faithbench.test") for i in range(3)])
    for i in range(2):
        CaseFactory(tradition=catholic, dimension="doctrinal", difficulty="medium", external_id=f"cath-{i:02d}")
    cycle = review_cycle_open(panel=panel, name="Spring review", user=lead)
    first, second = CaseReview.objects.filter(cycle=cycle, expert__in=panel.members.all()).order_by("id")[:2]
    expert = first.expert
    mine = CaseReview.objects.filter(cycle=cycle, expert=expert).order_by("id")
    done, todo = mine[0], mine[1]
    case_review_submit(review=done, user=expert, answers=ReviewAnswers("yes", "partly", "hard", 2, comment=""))
    expert.language = PSEUDO_ACCENTED
    expert.save(update_fields=["language"])
    client = Client()
    client.force_login(expert)
    data = [expert.display_name, "FaithBench Calibration", cycle.name]
    data += list(Tradition.objects.values_list("name", flat=True))
    data += list(TestCase.objects.values_list("external_id", flat=True))
    data += list(TestCase.objects.values_list("prompt", flat=True))
    data += list(TestCase.objects.values_list("reference_answer", flat=True))
    data = sorted({d for d in data if d}, key=len, reverse=True)
    problems = {}
    for url in (reverse("review:queue"), reverse("review:case", args=[todo.public_id]),
                reverse("review:case", args=[done.public_id])):
        page = client.get(url)
        assert page.status_code == 200, url
        found = unmarked_strings(page.content.decode(), allow=data)
        if found:
            problems[url] = found
    assert problems == {}
