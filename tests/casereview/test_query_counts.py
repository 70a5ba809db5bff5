"""The case-review pages cost the same few queries however many cases a cycle reviews (selectors build the rows)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from annotations.models import Panel
from casereview.models import CaseReview
from casereview.rules import ReviewAnswers
from casereview.services import case_review_submit, review_cycle_open
from tests.annotations.factories import CaseFactory, person, tradition

pytestmark = pytest.mark.django_db
NO = ReviewAnswers(valid="no", reference_correct="no", difficulty="medium", clarity=1)


def reviewed_cycle(cases: int, prefix: str, key: str):  # type: ignore[no-untyped-def]
    """A cycle over `cases` cases of a three-member panel of tradition `key`; every case reviewed "invalid" by all
    three (flagged), but the last review."""
    catholic = tradition(key)
    lead = person(User.Role.ADJUDICATOR, tradition=catholic)
    panel = Panel.objects.create(name=f"{prefix} panel", tradition=catholic, lead=lead)
    panel.members.set([person(tradition=catholic) for _ in range(3)])
    for i in range(cases):
        CaseFactory(tradition=catholic, external_id=f"{prefix}-{i:03d}")
    cycle = review_cycle_open(panel=panel, name=f"{prefix} review", user=lead)
    reviews = list(CaseReview.objects.filter(cycle=cycle).select_related("expert"))
    for review in reviews[:-1]:  # the last review stays open: one expert keeps something to do
        case_review_submit(review=review, user=review.expert, answers=NO)
    return cycle, lead, reviews[-1].expert


def queries(client, url: str) -> int:  # type: ignore[no-untyped-def]
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_review_pages_use_a_constant_number_of_queries(client) -> None:  # type: ignore[no-untyped-def]
    counts = []
    for cases, prefix, key in ((2, "few", "catholic"), (12, "many", "orthodox")):
        cycle, lead, expert = reviewed_cycle(cases, prefix, key)
        client.force_login(lead)
        lead_pages = [queries(client, reverse("review:cycles")), queries(client, reverse("review:cycle", args=[cycle.pk]))]
        client.force_login(expert)
        counts.append((*lead_pages, queries(client, reverse("review:queue"))))
    assert counts[0] == counts[1], counts
    assert max(counts[1]) <= 15, counts
