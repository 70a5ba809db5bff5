"""Lead and admin pages of calibration cost the same queries with few or many cycles, items, scores and decisions."""
from __future__ import annotations

from collections import Counter

import pytest
from django.urls import reverse

from annotations.models import AdjudicationDecision
from calibration.adjudication.selectors import item_states
from calibration.cycles.selectors import cycle_latest
from tests.growth import Base, PageCheck, assert_constant, measure_two_sizes

pytestmark = pytest.mark.django_db  # the test database must exist for the module fixture
MAX_QUERIES = 20


def _admin(base: Base):  # type: ignore[no-untyped-def]
    return base.admin


def _busiest_lead(base: Base):  # type: ignore[no-untyped-def]
    """The lead of the tradition panel with the most items that needed a decision."""
    disputed = Counter(s.panel_id for s in item_states().values() if s.needs_adjudication)
    leads = {lead.led_panels.get().pk: lead for lead in base.leads.values()}
    return leads[max(leads, key=lambda panel: disputed[panel])]


def _draw_data() -> dict[str, str]:
    return {"name": "Not stored", "seed": "7", "min_per_dimension": "50", "refresh_fraction": "0.25",
            "edge_fraction": "0.10", "previous": str(cycle_latest().pk), "action": "preview"}


def _a_disputed_item() -> int:
    """An item that needs a decision and has none yet (the newest one)."""
    decided = set(AdjudicationDecision.objects.values_list("item_id", flat=True))
    return max(s.item_id for s in item_states().values() if s.needs_adjudication and s.item_id not in decided)


def pages(base: Base) -> dict[str, PageCheck]:
    latest = cycle_latest()
    queue = reverse("calibration:adjudication_queue")
    return {
        "overview": PageCheck(_admin, lambda c: c.get(reverse("calibration:index")),
                              lambda r: len(r.context["cycles"])),
        "panels": PageCheck(_admin, lambda c: c.get(reverse("calibration:panels")), lambda r: len(r.context["panels"])),
        "cycle": PageCheck(_admin, lambda c: c.get(reverse("calibration:cycle", args=[latest.pk])),
                           lambda r: r.context["counts"]["total"]),
        "progress": PageCheck(_admin, lambda c: c.get(reverse("calibration:progress")),
                              lambda r: sum(p.panel.total for p in r.context["panels"])),
        "draw page": PageCheck(_admin, lambda c: c.get(reverse("calibration:draw")),
                               lambda r: len(r.context["form"].fields["previous"].queryset)),
        "draw preview": PageCheck(_admin, lambda c: c.post(reverse("calibration:draw"), _draw_data()),
                                  lambda r: r.context["total"]),
        "report": PageCheck(_admin, lambda c: c.get(reverse("calibration:report", args=[latest.pk]))),
        "gold export": PageCheck(_admin, lambda c: c.get(reverse("calibration:gold_export", args=[latest.pk])),
                                 lambda r: r.content.count(b"\n")),
        "adjudication queue": PageCheck(_admin, lambda c: c.get(queue), lambda r: r.context["page_obj"].paginator.count),
        "adjudication queue, decided too": PageCheck(_admin, lambda c: c.get(queue, {"decided": "1"}),
                                                     lambda r: r.context["page_obj"].paginator.count),
        "adjudication queue of a panel lead": PageCheck(_busiest_lead, lambda c: c.get(queue, {"decided": "1"}),
                                                        lambda r: r.context["page_obj"].paginator.count),
        "adjudication item": PageCheck(_admin, lambda c: c.get(
            reverse("calibration:adjudication_item", args=[_a_disputed_item()]))),
        "lead reopen list": PageCheck(_admin, lambda c: c.get(reverse("annotations:lead")),
                                      lambda r: len(r.context["rows"])),
        "panel health of a panel lead": PageCheck(_busiest_lead, lambda c: c.get(reverse(
            "calibration:panel_health", args=[_busiest_lead(base).led_panels.get().pk])),
            lambda r: r.context["health"].n_ratings),
    }


@pytest.fixture(scope="module")
def measured(django_db_setup, django_db_blocker, tmp_path_factory):  # type: ignore[no-untyped-def]
    return measure_two_sizes(django_db_blocker, tmp_path_factory.mktemp("growth"), pages)


PAGES = ["overview", "panels", "cycle", "progress", "draw page", "draw preview", "report", "gold export",
         "adjudication queue", "adjudication queue, decided too", "adjudication queue of a panel lead",
         "adjudication item", "lead reopen list", "panel health of a panel lead"]


@pytest.mark.parametrize("page", PAGES)
def test_lead_page_queries_do_not_grow_with_the_data(measured, page: str) -> None:
    assert_constant(measured[page], max_queries=MAX_QUERIES)


def test_every_measured_page_is_checked(measured) -> None:  # type: ignore[no-untyped-def]
    assert sorted(measured) == sorted(PAGES)
