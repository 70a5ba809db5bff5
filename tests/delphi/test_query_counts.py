"""The Delphi pages cost the same queries for few or many studies, panelists, rounds and answers."""
from __future__ import annotations

import pytest
from django.urls import reverse

from delphi.models import DelphiStudy
from tests.growth import Base, PageCheck, assert_constant, measure_two_sizes

pytestmark = pytest.mark.django_db  # the test database must exist for the module fixture
MAX_QUERIES = 25


def _admin(base: Base):  # type: ignore[no-untyped-def]
    return base.admin


def _newest() -> DelphiStudy:
    return DelphiStudy.objects.order_by("-pk").first()


def _first_panelist(base: Base):  # type: ignore[no-untyped-def]
    """A panelist of every study of the last growth (so of more studies when larger)."""
    return _newest().panelists.order_by("pk").first()


def pages(base: Base) -> dict[str, PageCheck]:
    study = _newest()
    return {
        "index (admin)": PageCheck(_admin, lambda c: c.get(reverse("delphi:index")), lambda r: len(r.context["rows"])),
        "index (panelist)": PageCheck(_first_panelist, lambda c: c.get(reverse("delphi:index")),
                                      lambda r: len(r.context["rows"])),
        "study (admin)": PageCheck(_admin, lambda c: c.get(reverse("delphi:study", args=[study.pk])),
                                   lambda r: len(r.context["panelists"])),
        "study (panelist)": PageCheck(_first_panelist, lambda c: c.get(reverse("delphi:study", args=[study.pk]))),
        "respond (panelist)": PageCheck(_first_panelist, lambda c: c.get(reverse("delphi:respond", args=[study.pk]))),
        "report JSON (admin)": PageCheck(_admin, lambda c: c.get(reverse("delphi:report_json", args=[study.pk])),
                                         lambda r: sum(len(x["allocations"]) for x in r.json()["rounds"])),
    }


PAGES = ["index (admin)", "index (panelist)", "study (admin)", "study (panelist)", "respond (panelist)",
         "report JSON (admin)"]


@pytest.fixture(scope="module")
def measured(django_db_setup, django_db_blocker, tmp_path_factory):  # type: ignore[no-untyped-def]
    return measure_two_sizes(django_db_blocker, tmp_path_factory.mktemp("growth"), pages)


@pytest.mark.parametrize("page", PAGES)
def test_delphi_page_queries_do_not_grow_with_the_data(measured, page: str) -> None:
    assert_constant(measured[page], max_queries=MAX_QUERIES)


def test_every_measured_page_is_checked(measured) -> None:  # type: ignore[no-untyped-def]
    assert sorted(measured) == sorted(PAGES)
