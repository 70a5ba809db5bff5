"""Panel health and My calibration pages: who sees what, blinding, closed cycles only, words instead of NaN."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotations.lifecycle import cycle_close
from annotations.models import Assignment, CycleItem
from annotations.services import AnnotationInput, annotation_submit, sub_dimension_keys
from calibration.adjudication.services import adjudication_record
from calibration.panelhealth.selectors import fmt, panel_health, redact
from tests.annotations.factories import (
    MODEL_FAMILY_MARKER,
    MODEL_NAME_MARKER,
    MODEL_PROVIDER_MARKER,
    OTHER_EXPERT_EMAIL,
    OTHER_EXPERT_NAME,
    OTHER_RATIONALE_MARKER,
    world_build,
)
from tests.blinding import Marker, leaks

pytestmark = pytest.mark.django_db

MARKERS = [Marker("another expert's name", OTHER_EXPERT_NAME), Marker("another expert's email", OTHER_EXPERT_EMAIL),
           Marker("model name", MODEL_NAME_MARKER), Marker("model provider", MODEL_PROVIDER_MARKER),
           Marker("model family", MODEL_FAMILY_MARKER)]


@pytest.fixture
def scored():  # type: ignore[no-untyped-def]
    """The world with the Catholic panel's three experts' submissions: the expert low, the others high (they
    disagree, so items go to adjudication); the other expert's rationale names themselves and a model."""
    world = world_build()
    third = world.catholic.members.exclude(pk__in=[world.expert.pk, world.other_expert.pk]).first()
    for who, value in ((world.expert, 0), (world.other_expert, 3), (third, 2)):
        for assignment in Assignment.objects.filter(expert=who):
            keys = sub_dimension_keys(assignment=assignment)
            rationale = (f"{OTHER_RATIONALE_MARKER} {OTHER_EXPERT_NAME} thinks {MODEL_NAME_MARKER} was good"
                         if who == world.other_expert else f"my own reasons {value}")
            annotation_submit(assignment=assignment, actor=who, seconds=90,
                              data=AnnotationInput(scores=dict.fromkeys(keys, value), rationale=rationale))
    item = CycleItem.objects.filter(assignments__expert=world.expert, assignments__panel=world.catholic).first()
    keys = sub_dimension_keys(assignment=item.assignments.first())
    adjudication_record(item_id=item.pk, adjudicator=world.lead, scores=dict.fromkeys(keys, 2), reason="other",
                        note=f"Closer to {OTHER_EXPERT_NAME}'s view; {MODEL_PROVIDER_MARKER} style answer.")
    return world


def _client(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_my_calibration_feedback_only_after_the_cycle_closes_and_never_names_anyone(scored) -> None:  # type: ignore[no-untyped-def]
    client = _client(scored.expert)
    url = reverse("calibration:my_calibration")
    before = client.get(url)
    assert before.status_code == 200
    assert b'data-testid="no-feedback"' in before.content
    assert b"cycle-feedback" not in before.content and b"my own reasons" not in before.content
    cycle_close(cycle=scored.cycle, actor=scored.admin)
    after = client.get(url)
    body = after.content.decode()
    assert after.status_code == 200
    assert 'data-testid="cycle-feedback"' in body and 'data-testid="example"' in body
    assert "my own reasons 0" in body  # their own rationale in the worked example
    assert "[hidden]" in body  # the adjudicator's note and the other rationale, names redacted
    assert OTHER_RATIONALE_MARKER in body  # …the other rationale is there, anonymised
    assert leaks(after, MARKERS) == []
    assert "nan" not in body.lower().replace("nonce", "")


def test_my_calibration_compares_with_gold_and_panel_per_sub_dimension(scored) -> None:  # type: ignore[no-untyped-def]
    from calibration.panelhealth.selectors import my_calibration

    cycle_close(cycle=scored.cycle, actor=scored.admin)
    feedback = my_calibration(expert=scored.expert)
    assert len(feedback) == 1
    subs = {s.key: s for s in feedback[0].subs}
    with_gold = [s for s in subs.values() if s.gold_n]
    assert with_gold, "the adjudicated item's sub-dimensions carry gold"
    for s in with_gold:
        assert s.gold_agreement == "0.00"  # the expert scored 0, gold is 2
        assert s.gold_deviation == "-2.00"
    # the others scored 3 and 2 on the Catholic items: the expert is 2.5 below the panel's average there
    assert any(s.panel_deviation == "-2.50" for s in subs.values())


def test_my_calibration_other_expert_of_another_panel_sees_none_of_it(scored) -> None:  # type: ignore[no-untyped-def]
    cycle_close(cycle=scored.cycle, actor=scored.admin)
    response = _client(scored.other_panel_expert).get(reverse("calibration:my_calibration"))
    assert response.status_code == 200
    assert b"my own reasons" not in response.content and OTHER_RATIONALE_MARKER.encode() not in response.content


def test_rater_severity_panel_health_page_for_the_lead_says_why_in_words(scored, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    client = _client(scored.lead)
    url = reverse("calibration:panel_health", args=[scored.catholic.pk])
    with django_assert_max_num_queries(25):
        response = client.get(url)
    body = response.content.decode()
    assert response.status_code == 200
    assert "Too few ratings for a severity" in body  # two items each: far below the model's minimum
    assert "Test–retest" in body
    assert "nan" not in body.lower().replace("nonce", "")
    assert 'data-testid="rules"' in body and "CUSUM" in body  # every flag's rule and false-positive rate
    one = client.get(url + f"?cycle={scored.cycle.pk}")
    assert one.status_code == 200 and "no anchor items" in one.content.decode()
    for junk in ("xyz", "²", "9" * 30, str(2**63), "-1"):
        bad = client.get(url, {"cycle": junk})
        assert bad.status_code == 200 and "is not a cycle of this panel" in bad.content.decode(), junk
    export = client.get(reverse("calibration:panel_health_export", args=[scored.catholic.pk]))
    text = export.content.decode()
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")
    assert "Too few ratings for a severity" in text and "nan" not in text.lower()
    assert text.count("\n") >= 3 + len(scored.catholic.members.all())  # header lines, columns, one row per expert


def test_rater_severity_panel_health_other_lead_and_experts_get_404(scored) -> None:  # type: ignore[no-untyped-def]
    url = reverse("calibration:panel_health", args=[scored.catholic.pk])
    for user in (scored.other_lead, scored.expert, scored.other_expert):
        assert _client(user).get(url).status_code == 404
    assert _client(scored.admin).get(url).status_code == 200


def test_rater_severity_panel_with_no_scores_says_so(db) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    health = panel_health(panel=world.orthodox)
    assert health.rows == [] and any("No submitted scores" in n for n in health.notes)


def test_rater_severity_formatting_never_prints_nan_and_redaction_hides_names() -> None:
    assert fmt(float("nan")) == "—" and fmt(None) == "—" and fmt(float("inf")) == "—" and fmt(0.5, signed=True) == "+0.50"
    assert redact("Ask Zq Otherexpert Namemarker about ZQMODELNAME-7731", [OTHER_EXPERT_NAME, MODEL_NAME_MARKER]) == \
        "Ask [hidden] about [hidden]"


def test_my_calibration_and_panel_health_are_linked_from_home_for_their_readers(db) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    mine, health = reverse("calibration:my_calibration"), reverse("calibration:panel_health_index")
    expert_home = _client(world.expert).get(reverse("home")).content.decode()
    assert f'href="{mine}"' in expert_home and f'href="{health}"' not in expert_home
    lead_home = _client(world.lead).get(reverse("home")).content.decode()
    assert f'href="{health}"' in lead_home
    admin_calibration = _client(world.admin).get(reverse("calibration:index")).content.decode()
    assert f'href="{health}"' in admin_calibration
    assert _client(world.lead).get(health).status_code == 200  # the link leads somewhere its reader may go


def test_rater_drift_reads_a_panel_with_one_cycle_by_week() -> None:
    """All cycles of a panel that has only one: drift by week of that cycle (by cycle there would be one period and
    no test); two or more cycles: by cycle."""
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace

    from calibration.panelhealth.selectors import Rating, _drift_periods

    start = datetime(2026, 11, 2, 9, tzinfo=UTC)
    ratings = [Rating(response_id=1, item_id=1, expert_id=5, key="a", score=2, cycle_id=7,
                      submitted_at=start + timedelta(days=day), seconds=60, annotation_id=day) for day in (0, 6, 8, 20)]
    one = [SimpleNamespace(pk=7, name="Cycle 7")]
    periods, labels, basis = _drift_periods(None, one, ratings)  # type: ignore[arg-type]
    assert periods == [0, 0, 1, 2] and labels[2] == "week 3" and basis.startswith("week")
    two = [SimpleNamespace(pk=8, name="Cycle 8"), SimpleNamespace(pk=7, name="Cycle 7")]  # newest first
    periods, labels, basis = _drift_periods(None, two, ratings)  # type: ignore[arg-type]
    assert periods == [0, 0, 0, 0] and labels == {0: "Cycle 7", 1: "Cycle 8"} and basis == "cycle"
