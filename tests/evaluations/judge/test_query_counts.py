"""The judge pages cost the same queries for few or many runs, items and results."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from evaluations.models import JudgeRun
from tests.growth import Base, PageCheck, assert_constant, measure_two_sizes

pytestmark = pytest.mark.django_db  # the test database must exist for the module fixture
MAX_QUERIES = 14  # the run page: + its failed calls explained (one query) and its series of repeats (one)


def _admin(base: Base):  # type: ignore[no-untyped-def]
    return base.admin


def _items(response) -> int:  # type: ignore[no-untyped-def]
    return sum(row.items for row in response.context["board"].models)


def _computed(client, url: str):  # type: ignore[no-untyped-def]
    cache.clear()
    return client.get(url)


def pages(base: Base) -> dict[str, PageCheck]:
    latest = JudgeRun.objects.order_by("-created_at", "-id").first()
    leaderboard, api = reverse("judge:leaderboard"), reverse("api-leaderboard")
    return {
        "run list": PageCheck(_admin, lambda c: c.get(reverse("judge:run_list")), lambda r: len(r.context["runs"])),
        "run detail": PageCheck(_admin, lambda c: c.get(reverse("judge:run_detail", args=[latest.pk])),
                                lambda r: r.context["summary"].total),
        "leaderboard, computed": PageCheck(_admin, lambda c: _computed(c, leaderboard), _items),
        "leaderboard, cached": PageCheck(_admin, lambda c: c.get(leaderboard), _items),
        "leaderboard API, computed": PageCheck(_admin, lambda c: _computed(c, api),
                                               lambda r: sum(m["items"] for m in r.json()["models"])),
        "leaderboard API, cached": PageCheck(_admin, lambda c: c.get(api),
                                             lambda r: sum(m["items"] for m in r.json()["models"])),
    }


PAGES = ["run list", "run detail", "leaderboard, computed", "leaderboard, cached", "leaderboard API, computed",
         "leaderboard API, cached"]


@pytest.fixture(scope="module")
def measured(django_db_setup, django_db_blocker, tmp_path_factory):  # type: ignore[no-untyped-def]
    return measure_two_sizes(django_db_blocker, tmp_path_factory.mktemp("growth"), pages)


@pytest.mark.parametrize("page", PAGES)
def test_judge_page_queries_do_not_grow_with_the_data(measured, page: str) -> None:
    assert_constant(measured[page], max_queries=MAX_QUERIES)


def test_every_measured_page_is_checked(measured) -> None:  # type: ignore[no-untyped-def]
    assert sorted(measured) == sorted(PAGES)


def test_a_cached_leaderboard_costs_fewer_queries_than_computing_it(measured) -> None:  # type: ignore[no-untyped-def]
    assert measured["leaderboard, cached"].queries[1] < measured["leaderboard, computed"].queries[1]
