"""The Delphi pages: the expert's form (validation messages, round-2 feedback), admin actions and reports."""
from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from delphi.models import DelphiAllocation, DelphiResponse, DelphiStudy
from evaluations.models import JudgeScore
from tests.delphi.factories import RATIONALE_MARKER, allocation, close, form_data, submit_all
from tests.delphi.judge_data import judge_run_seed

pytestmark = pytest.mark.django_db


def as_user(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def respond_url(world) -> str:  # type: ignore[no-untyped-def]
    return reverse("delphi:respond", kwargs={"pk": world.study.pk})


def test_round_1_form_has_thirty_fields_running_totals_and_no_feedback(dworld) -> None:  # type: ignore[no-untyped-def]
    page = as_user(dworld.expert).get(respond_url(dworld))
    html = page.content.decode()
    assert page.status_code == 200 and page["Cache-Control"].startswith("max-age=0")
    assert len(re.findall(r'name="w__', html)) == 30 and len(re.findall(r'name="r__', html)) == 30
    assert len(re.findall(r"data-total-for=", html)) == 7  # dimensions + six sub-dimension groups
    assert "js/delphi.js" in html and 'data-testid="median-' not in html


@pytest.mark.parametrize(("field", "value", "message"), [
    ("w__textual", "24.5", "The six dimensions total 99.5 points; they must total exactly 100 (0.5 missing)."),
    ("w__textual", "25.25", "Use at most one decimal place, e.g. 12.5."),
    ("w__textual__lexicalAccuracy", "-5", "Points cannot be negative."),
    ("w__hermeneutical", "twenty", "is not a number"),
])
def test_invalid_allocations_are_refused_with_a_clear_message_and_nothing_is_saved(dworld, field, value, message):  # type: ignore[no-untyped-def]
    data = form_data(dworld.structure, allocation(dworld.structure))
    data[field] = value
    page = as_user(dworld.expert).post(respond_url(dworld), data)
    html = page.content.decode()
    assert page.status_code == 422
    assert message in html and "Nothing was saved" in html
    assert f'value="{value}"' in html  # the expert's input is kept
    assert not DelphiResponse.objects.exists()


def test_a_valid_allocation_with_one_decimal_is_saved(dworld) -> None:  # type: ignore[no-untyped-def]
    data = form_data(dworld.structure, allocation(dworld.structure, shift="2.5"))
    data["r__textual"] = "Textual work is foundational."
    response = as_user(dworld.expert).post(respond_url(dworld), data)
    assert response.status_code == 302 and response["Location"] == reverse("delphi:study", args=[dworld.study.pk])
    saved = dict(DelphiAllocation.objects.filter(response__expert=dworld.expert).values_list("key", "points"))
    assert saved["textual"] == Decimal("27.5") and saved["hermeneutical"] == Decimal("17.5")
    assert sum(v for k, v in saved.items() if "." not in k) == Decimal("100")
    page = as_user(dworld.expert).get(respond_url(dworld)).content.decode()
    assert 'value="27.5"' in page and "Textual work is foundational." in page and "You submitted this round" in page


def test_round_2_shows_median_iqr_histogram_own_value_and_shuffled_anonymous_rationales(dworld) -> None:  # type: ignore[no-untyped-def]
    submit_all(dworld, dworld.round(1), [-15, -5, 5, 15, 0])  # the expert's textual: 10
    close(dworld.round(1), dworld)
    client = as_user(dworld.expert)
    html = client.get(respond_url(dworld)).content.decode()
    assert "round 2" in html
    # textual: 10, 20, 30, 40, 25 → median 25, Q1 20, Q3 30, IQR 10 (not converged)
    assert re.search(r'data-testid="median-textual">25<', html)
    assert re.search(r'data-testid="iqr-textual">10<', html)
    assert re.search(r'data-testid="own-previous-textual">10<', html)
    assert html.count("<svg") == 30 and "Histogram of answers for Textual Analysis" in html
    assert 'value="10"' in html  # the form starts from the expert's own previous answer
    rationales = re.findall(rf"<li>({RATIONALE_MARKER} shift [-\d]+)</li>", html)
    assert len(rationales) == 7 * 5  # the first weight of each of the 7 groups, 5 rationales each
    groups = [rationales[i:i + 5] for i in range(0, 35, 5)]
    assert any(g != sorted(g) for g in groups)  # shuffled, not in submission (or alphabetical) order
    again = client.get(respond_url(dworld)).content.decode()
    assert re.findall(rf"<li>({RATIONALE_MARKER} shift [-\d]+)</li>", again) == rationales  # stable for the page
    # a different viewer gets a different order somewhere (seeded per viewer), yet the same texts
    other = as_user(dworld.others[0]).get(respond_url(dworld)).content.decode()
    assert sorted(re.findall(rf"<li>({RATIONALE_MARKER} shift [-\d]+)</li>", other)) == sorted(rationales)


def test_admin_closes_rounds_and_the_study_then_approves_with_no_judge_scores(dworld) -> None:  # type: ignore[no-untyped-def]
    admin = as_user(dworld.admin)
    submit_all(dworld, dworld.round(1), [-12, -6, 0, 6, 12])
    response = admin.post(reverse("delphi:round_close", args=[dworld.study.pk, 1]), follow=True)
    html = response.content.decode()
    assert "Round 1 closed: 5 of 5 panelists answered" in html and "Round 2 is open." in html
    assert 'data-testid="non-responders-1">0<' in html
    submit_all(dworld, dworld.round(2), [-2, -1, 0, 1, 2])
    html = admin.post(reverse("delphi:round_close", args=[dworld.study.pk, 2]), follow=True).content.decode()
    assert "Every weight converged" in html and 'data-testid="round-converged-2"' in html
    html = admin.post(reverse("delphi:study_close", args=[dworld.study.pk]), follow=True).content.decode()
    assert "Proposed weights" in html and 'data-testid="proposed-dimensions-textual"><strong>25.00<' in html
    assert 'data-testid="no-judge-scores"' in html  # the preview says there are no judge scores
    html = admin.post(reverse("delphi:approve", args=[dworld.study.pk]), {"version": "1.1-cath"},
                      follow=True).content.decode()
    dworld.study.refresh_from_db()
    assert dworld.study.status == DelphiStudy.Status.APPROVED and dworld.study.proposed_rubric.version == "1.1-cath"
    assert "Rubric v1.1-cath created as a draft." in html and "No judge scores exist yet" in html
    report = json.loads(admin.get(reverse("delphi:report_json", args=[dworld.study.pk])).content)
    assert [r["number"] for r in report["rounds"]] == [1, 2] and report["study"]["proposed_rubric"] == "1.1-cath"
    assert report["rounds"][1]["summary"]["converged"] is True
    assert {a["email"] for a in report["rounds"][0]["allocations"]} == {u.email for u in dworld.panelists}


def test_admin_study_page_shows_rescoring_with_judge_scores(dworld) -> None:  # type: ignore[no-untyped-def]
    judge_run_seed(rubric=dworld.rubric)
    assert JudgeScore.objects.exists()
    submit_all(dworld, dworld.round(1), [-15, -15, -15])
    close(dworld.round(1), dworld)
    admin = as_user(dworld.admin)
    admin.post(reverse("delphi:study_close", args=[dworld.study.pk]))
    html = admin.get(reverse("delphi:study", args=[dworld.study.pk])).content.decode()
    assert "proposal (preview)" in html and 'data-testid="kendall-tau">0.333<' in html
    assert "zqdelphi/model-beta" in html and 'data-testid="sensitivity"' in html
    html = admin.post(reverse("delphi:approve", args=[dworld.study.pk]), follow=True).content.decode()
    assert "under the new rubric" in html and 'data-testid="kendall-tau">0.333<' in html
    assert admin.post(reverse("delphi:rescore", args=[dworld.study.pk]), follow=True).status_code == 200


def test_admin_sees_who_answered_and_the_expert_does_not(dworld) -> None:  # type: ignore[no-untyped-def]
    submit_all(dworld, dworld.round(1), [0, 0])
    admin_page = as_user(dworld.admin).get(reverse("delphi:study", args=[dworld.study.pk])).content.decode()
    assert dworld.others[0].email in admin_page and admin_page.count(">answered<") == 2
    assert "no answer" in admin_page
    expert_page = as_user(dworld.expert).get(reverse("delphi:study", args=[dworld.study.pk])).content.decode()
    assert dworld.others[0].email not in expert_page and "Change your round 1 weights" in expert_page


def test_create_study_page_warns_below_five_panelists(dworld) -> None:  # type: ignore[no-untyped-def]
    admin = as_user(dworld.admin)
    assert admin.get(reverse("delphi:create")).status_code == 200
    response = admin.post(reverse("delphi:create"), {
        "name": "Three Catholics", "rubric": dworld.rubric.pk, "tradition": dworld.panel.tradition.pk,
        "panelists": [u.pk for u in dworld.panelists[:3]], "planned_rounds": "3", "convergence_threshold": "10",
    }, follow=True)
    html = response.content.decode()
    study = DelphiStudy.objects.get(name="Three Catholics")
    assert response.redirect_chain[-1][0] == reverse("delphi:study", args=[study.pk])
    assert "Only 3 panelists for Catholic" in html and "round 1 is open" in html
    bad = admin.post(reverse("delphi:create"), {"name": "No one", "rubric": dworld.rubric.pk, "planned_rounds": "3",
                                                "convergence_threshold": "10"})
    assert bad.status_code == 422 and "Choose a panel or at least one panelist." in bad.content.decode()


def test_index_lists_only_the_experts_own_studies(dworld) -> None:  # type: ignore[no-untyped-def]
    html = as_user(dworld.expert).get(reverse("delphi:index")).content.decode()
    assert "Catholic weights" in html and "Give your weights" in html
    html = as_user(dworld.outsider).get(reverse("delphi:index")).content.decode()
    assert "Catholic weights" not in html and "not a panelist of any" in html


def test_index_and_study_page_query_counts_are_bounded(dworld, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    submit_all(dworld, dworld.round(1), [-15, -5, 5, 15, 0])
    close(dworld.round(1), dworld)
    admin, expert = as_user(dworld.admin), as_user(dworld.expert)
    with django_assert_max_num_queries(12):
        admin.get(reverse("delphi:index"))
    with django_assert_max_num_queries(20):
        admin.get(reverse("delphi:study", args=[dworld.study.pk]))
    with django_assert_max_num_queries(20):
        expert.get(respond_url(dworld))


# --- invalid posts: the form's field errors next to their fields, nothing saved ---------------------------


def test_an_invalid_allocation_shows_each_error_next_to_its_field_and_the_total_with_its_level(dworld) -> None:  # type: ignore[no-untyped-def]
    data = form_data(dworld.structure, allocation(dworld.structure))
    data["w__textual__lexicalAccuracy"] = "abc"
    data["w__historical"] = "16"  # the dimensions then total 101
    data["r__apologetics"] = "r" * 2001
    page = as_user(dworld.expert).post(respond_url(dworld), data)
    html = page.content.decode()
    assert page.status_code == 422
    form = page.context["form"]
    assert form.errors["w__textual__lexicalAccuracy"] == [
        "“abc” is not a number: enter a whole number or one decimal, e.g. 25 or 12.5."]
    assert form.errors["r__apologetics"] == ["Keep the rationale under 2000 characters."]
    assert re.search(r'id="w-textual-lexicalAccuracy"\s+value="abc"[^>]*aria-invalid="true">\s*'
                     r'<div class="hint"[^>]*></div>\s*<ul class="errorlist" id="err-w-textual-lexicalAccuracy">'
                     r"<li>“abc” is not a number", html)
    assert re.search(r'<ul class="errorlist" id="err-r-w-apologetics"><li>Keep the rationale under 2000', html)
    total = "The six dimensions total 101 points; they must total exactly 100 (1 too many)."
    assert re.search(rf'<ul class="errorlist" id="err-total-dimensions"><li>{re.escape(total)}</li>', html)
    assert 'id="err-total-textual"' not in html  # its total is not checked while one of its fields is wrong
    assert not DelphiResponse.objects.exists()


def test_create_study_with_bad_fields_shows_the_errors_next_to_them(dworld) -> None:  # type: ignore[no-untyped-def]
    response = as_user(dworld.admin).post(reverse("delphi:create"), {
        "name": "Catholic weights", "rubric": dworld.rubric.pk, "panel": dworld.panel.pk, "planned_rounds": "0",
        "convergence_threshold": "10.555",
    })
    html = response.content.decode()
    assert response.status_code == 422
    for field, message in (("name", "A Delphi study with this name exists."),
                           ("planned_rounds", "Ensure this value is greater than or equal to 1."),
                           ("convergence_threshold", "Ensure that there are no more than 2 decimal places.")):
        assert re.search(rf'name="{field}"[^>]*>\s*<ul class="errorlist" id="id_{field}_error"><li>'
                         rf"{re.escape(message)}</li>", html), field
    assert DelphiStudy.objects.count() == 1


def test_approval_with_a_taken_or_too_long_version_name_comes_back_on_the_version_field(dworld) -> None:  # type: ignore[no-untyped-def]
    submit_all(dworld, dworld.round(1), [-2, -1, 0, 1, 2])
    close(dworld.round(1), dworld)
    admin = as_user(dworld.admin)
    admin.post(reverse("delphi:study_close", args=[dworld.study.pk]))
    for version, message in (("1.0", "Rubric version 1.0 exists already."),
                             ("v" * 21, "Ensure this value has at most 20 characters (it has 21).")):
        response = admin.post(reverse("delphi:approve", args=[dworld.study.pk]), {"version": version})
        html = response.content.decode()
        assert response.status_code == 422
        assert re.search(rf'name="version" value="{version}"[^>]*> <ul class="errorlist" id="id_version_error">'
                         rf"<li>{re.escape(message)}</li>", html), version
    dworld.study.refresh_from_db()
    assert dworld.study.status == DelphiStudy.Status.PROPOSED and dworld.study.proposed_rubric is None


def test_index_lists_the_studies_a_page_at_a_time(dworld, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from delphi import views
    from delphi.services import delphi_study_create

    delphi_study_create(name="Second study", rubric=dworld.rubric, panelists=[dworld.expert], created_by=dworld.admin)
    monkeypatch.setattr(views, "STUDIES_PAGE_SIZE", 1)
    admin = as_user(dworld.admin)
    first, second = (admin.get(reverse("delphi:index"), {"page": n}) for n in ("1", "2"))
    shown = [row.name for page in (first, second) for row in page.context["rows"]]
    assert sorted(shown) == ["Catholic weights", "Second study"]
    assert "Page 1 of 2" in first.content.decode()
