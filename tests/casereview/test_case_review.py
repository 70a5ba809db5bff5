"""Test-case review at service level and through the views: cycle, blind reviews, flags, revisions, blinding."""
from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from accounts.models import User
from annotations.models import Panel
from casereview.agreement import review_report_snapshot
from casereview.models import CaseFlag, CaseReview
from casereview.rules import ReviewAnswers, ReviewError, flag_reasons, stratified_sample
from casereview.selectors import case_history, validated_cases
from casereview.services import case_flag_resolve, case_review_submit, review_cycle_open
from evaluations.domain import Visibility
from evaluations.models import TestCase, TestCaseRevision
from stats.bootstrap import named_seed_sequence
from stats.intervals import agreement_interval
from tests.annotations.factories import CaseFactory, person, tradition
from tests.blinding import Marker, leaks

YES = ReviewAnswers(valid="yes", reference_correct="yes", difficulty="medium", clarity=3)
NO = ReviewAnswers(valid="no", reference_correct="no", difficulty="medium", clarity=1, comment="Wrong doctrine.")


@pytest.fixture
def panel(db):
    catholic = tradition("catholic")
    lead = person(User.Role.ADJUDICATOR, tradition=catholic, name="Lena Lead")
    p = Panel.objects.create(name="Catholic panel", tradition=catholic, lead=lead)
    p.members.set([person(tradition=catholic, name=f"Rev Zq{i}", email=f"rev{i}@faithbench.test") for i in range(4)])
    for i in range(6):
        CaseFactory(tradition=catholic, dimension=["doctrinal", "textual"][i % 2], difficulty="medium",
                    external_id=f"cath-{i:02d}")
    CaseFactory(tradition=tradition("orthodox"), external_id="orth-00")
    return p


def submit_all(cycle, case, answers):
    for review, a in zip(CaseReview.objects.filter(cycle=cycle, test_case=case).order_by("id"), answers, strict=True):
        case_review_submit(review=review, user=review.expert, answers=a)


def test_open_assigns_three_distinct_reviewers_per_case_evenly(panel):
    cycle = review_cycle_open(panel=panel, name="Spring review", user=panel.lead)
    reviews = CaseReview.objects.filter(cycle=cycle)
    assert reviews.count() == 6 * 3
    assert not reviews.filter(test_case__external_id="orth-00").exists()  # only the panel's tradition
    for case_id in reviews.values_list("test_case", flat=True).distinct():
        experts = list(reviews.filter(test_case=case_id).values_list("expert", flat=True))
        assert len(set(experts)) == 3
    loads = sorted(reviews.values_list("expert").annotate().values_list("expert", flat=True))
    counts = {e: loads.count(e) for e in set(loads)}
    assert max(counts.values()) - min(counts.values()) <= 1  # 18 reviews over 4 experts: 4 or 5 each


def test_open_refuses_too_few_reviewers_or_members(panel):
    with pytest.raises(ReviewError, match="at least 3 reviewers"):
        review_cycle_open(panel=panel, name="x", user=panel.lead, reviewers=2)
    with pytest.raises(ReviewError, match="4 active members"):
        review_cycle_open(panel=panel, name="x", user=panel.lead, reviewers=5)


def test_stratified_sample_keeps_proportions(db):
    catholic = tradition("catholic")
    cases = [CaseFactory(tradition=catholic, dimension="doctrinal" if i < 30 else "textual") for i in range(40)]
    chosen = stratified_sample(cases, 10, seed=3)
    assert len(chosen) == 10
    # 30/40 of 10 → 7.5 and 10/40 of 10 → 2.5: the remainders tie, and a tie is a seeded draw
    # (stats.apportion.largest_remainder) — no longer the alphabetically first stratum; seed 3 gives it to textual
    assert sum(c.dimension == "doctrinal" for c in chosen) == 7
    doctrinal = {sum(c.dimension == "doctrinal" for c in stratified_sample(cases, 10, seed=s)) for s in range(12)}
    assert doctrinal == {7, 8}
    assert stratified_sample(cases, 10, seed=3) == chosen  # seeded
    assert len(stratified_sample(cases, 100, seed=3)) == 40


def test_submit_is_own_once_and_complete(panel):
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    review = CaseReview.objects.filter(cycle=cycle).first()
    stranger = person(tradition=tradition("catholic"))
    with pytest.raises(PermissionDenied):
        case_review_submit(review=review, user=stranger, answers=YES)
    with pytest.raises(ReviewError):
        case_review_submit(review=review, user=review.expert,
                           answers=ReviewAnswers(valid="maybe", reference_correct="yes", difficulty="easy", clarity=4))
    case_review_submit(review=review, user=review.expert, answers=YES)
    with pytest.raises(ReviewError, match="already submitted"):
        case_review_submit(review=review, user=review.expert, answers=NO)


@pytest.mark.parametrize("answers, reasons", [
    ([YES, YES, YES], []),
    ([NO, NO, YES], ["majority_invalid", "reference_wrong"]),
    ([ReviewAnswers("no", "yes", "easy", 2), ReviewAnswers("no", "yes", "easy", 2), YES], ["majority_invalid"]),
    ([ReviewAnswers("yes", "no", "easy", 2), ReviewAnswers("yes", "no", "easy", 2), YES], ["reference_wrong"]),
    ([YES, ReviewAnswers("no", "yes", "medium", 3), ReviewAnswers("unsure", "yes", "medium", 3)], ["low_agreement"]),
    ([YES, YES, ReviewAnswers("yes", "yes", "expert", 3)], ["low_agreement"]),  # medium vs expert: 2 levels apart
    ([YES, YES, ReviewAnswers("yes", "yes", "hard", 3)], []),  # one level apart is agreement
])
def test_flag_rules(answers, reasons):
    reviews = [CaseReview(valid=a.valid, reference_correct=a.reference_correct, difficulty=a.difficulty,
                          clarity=a.clarity) for a in answers]
    assert flag_reasons(reviews) == reasons


def test_flag_raised_only_when_all_reviews_are_in_then_revise_keeps_history(panel):
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    case = TestCase.objects.get(external_id="cath-00")
    reviews = list(CaseReview.objects.filter(cycle=cycle, test_case=case).order_by("id"))
    case_review_submit(review=reviews[0], user=reviews[0].expert, answers=NO)
    case_review_submit(review=reviews[1], user=reviews[1].expert, answers=NO)
    assert not CaseFlag.objects.exists()
    case_review_submit(review=reviews[2], user=reviews[2].expert, answers=YES)
    flag = CaseFlag.objects.get()
    assert flag.reasons == ["majority_invalid", "reference_wrong"] and flag.case_version == 1
    old_prompt = case.prompt
    with pytest.raises(ReviewError, match="must change"):
        case_flag_resolve(flag=flag, user=panel.lead, action="revise")
    case_flag_resolve(flag=flag, user=panel.lead, action="revise", prompt="A clearer question.",
                      reference_answer="The corrected answer.", note="Fixed the reference.")
    case.refresh_from_db()
    assert case.version == 2 and case.prompt == "A clearer question."
    assert TestCaseRevision.objects.get(test_case=case, version=1).prompt == old_prompt
    history = case_history(case)
    assert [h.version for h in history] == [1, 2]
    assert len(history[0].reviews) == 3 and history[1].reviews == ()  # scores stay with the version given
    assert history[0].prompt == old_prompt and history[1].reason == "Fixed the reference."
    with pytest.raises(ReviewError, match="already resolved"):
        case_flag_resolve(flag=flag, user=panel.lead, action="retire", note="x")


def test_retire_needs_a_reason_and_deactivates(panel):
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    case = TestCase.objects.get(external_id="cath-01")
    submit_all(cycle, case, [NO, NO, NO])
    flag = CaseFlag.objects.get()
    with pytest.raises(ReviewError):
        case_flag_resolve(flag=flag, user=panel.lead, action="retire")
    case_flag_resolve(flag=flag, user=panel.lead, action="retire", note="Not a valid test.")
    case.refresh_from_db()
    assert not case.is_active and case.retired_reason == "Not a valid test."


def test_validated_cases_and_report(panel):
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    cases = list(TestCase.objects.filter(external_id__startswith="cath").order_by("external_id"))
    submit_all(cycle, cases[0], [YES, YES, YES])
    submit_all(cycle, cases[1], [NO, NO, YES])
    submit_all(cycle, cases[2], [YES, YES, ReviewAnswers("yes", "partly", "hard", 2)])
    assert validated_cases() == {cases[0].pk, cases[2].pk}
    report = review_report_snapshot(cycle=cycle, user=panel.lead, n_resamples=200)
    payload = report.payload
    assert report.version == 1 and payload["reviews"]["submitted"] == 9 and payload["cases_reviewed"] == 3
    fields = {row["field"]: row for row in payload["agreement"]}
    assert set(fields) == {"valid", "reference_correct", "difficulty", "clarity"}
    assert fields["valid"]["level"] == "nominal" and fields["difficulty"]["level"] == "ordinal"
    # valid: units (yes,yes,yes), (no,no,yes), (yes,yes,yes): α by hand from the coincidence matrix
    # (Krippendorff 2011: each ordered pair within a unit weighs 1/(m−1)): o(yes,yes) = 3 + 3, o(no,no) = 1,
    # o(no,yes) = o(yes,no) = 1; n = 9, n_no = 2, n_yes = 7; D_o = 2/9, D_e = 2·2·7/(9·8) → α = 1 − (2/9)/(28/72) = 3/7
    assert fields["valid"]["alpha"] == pytest.approx(3 / 7, abs=1e-9)
    # the interval is the percentile interval of the one unit bootstrap (stats.intervals), the field's own stream
    matrix = np.array([[2.0, 0.0, 2.0], [2.0, 0.0, 2.0], [2.0, 2.0, 2.0]])  # valid: no 0, unsure 1, yes 2
    expected = agreement_interval(matrix, level="nominal", categories=[0.0, 1.0, 2.0], n_resamples=200,
                                  seed=named_seed_sequence(0, "valid"))
    assert fields["valid"]["interval"] == list(expected.interval)
    assert payload["flags"]["total"] == 1
    assert payload["difficulty"]["table"]["medium"]["medium"] == 3
    assert review_report_snapshot(cycle=cycle, user=panel.lead, n_resamples=200).version == 2


# --- views and blinding ------------------------------------------------------------------------------------


def test_review_page_is_blind_and_only_for_its_reviewer(panel, client):
    held = CaseFactory(tradition=tradition("catholic"), external_id="cath-held", visibility=Visibility.HELD_OUT,
                       prompt="HELDOUTMARKER-5521 Which council?", difficulty="expert")
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    reviews = list(CaseReview.objects.filter(cycle=cycle, test_case=held).order_by("id"))
    first, second = reviews[0], reviews[1]
    case_review_submit(review=first, user=first.expert,
                       answers=ReviewAnswers("no", "partly", "hard", 1, comment="OTHERCOMMENT-7731"))
    client.force_login(second.expert)
    page = client.get(reverse("review:case", args=[second.public_id]))
    assert page.status_code == 200 and "HELDOUTMARKER-5521" in page.content.decode()
    markers = [Marker("other reviewer's comment", "OTHERCOMMENT-7731"),
               Marker("other reviewer's name", first.expert.display_name),
               Marker("other reviewer's email", first.expert.email),
               Marker("the corpus's difficulty", "assigned difficulty")]
    assert leaks(page, markers) == []
    # the difficulty question starts unanswered: the corpus's own tier ("expert") is not suggested
    assert "checked" not in page.content.decode()
    # the queue neither: no other reviewer, no count of reviews
    assert leaks(client.get(reverse("review:queue")), markers) == []
    # another reviewer's review, or anyone else: 404, not 403 (existence not confirmed)
    assert client.get(reverse("review:case", args=[first.public_id])).status_code == 404
    outsider = person(tradition=tradition("orthodox"))
    client.force_login(outsider)
    assert client.get(reverse("review:case", args=[second.public_id])).status_code == 404
    # the lead sees the reviews but not a held-out case's text
    client.force_login(panel.lead)
    history = client.get(reverse("review:case_history", args=[held.pk]))
    assert history.status_code == 200 and "HELDOUTMARKER-5521" not in history.content.decode()
    assert client.get(reverse("review:cycle", args=[cycle.pk])).status_code == 200


def test_submit_through_the_view_and_other_leads_get_404(panel, client):
    cycle = review_cycle_open(panel=panel, name="r", user=panel.lead)
    review = CaseReview.objects.filter(cycle=cycle).first()
    client.force_login(review.expert)
    url = reverse("review:case", args=[review.public_id])
    bad = client.post(url, {"valid": "yes"})
    assert bad.status_code == 422 and "This field is required" in bad.content.decode()
    ok = client.post(url, {"valid": "yes", "reference_correct": "partly", "difficulty": "hard", "clarity": "2",
                           "comment": "Fine."})
    assert ok.status_code == 302
    review.refresh_from_db()
    assert review.is_submitted and review.reference_correct == "partly" and review.clarity == 2
    other_lead = person(User.Role.ADJUDICATOR, tradition=tradition("orthodox"))
    Panel.objects.create(name="Orthodox panel", tradition=tradition("orthodox"), lead=other_lead)
    client.force_login(other_lead)
    assert client.get(reverse("review:cycle", args=[cycle.pk])).status_code == 404
    assert client.get(reverse("review:case_history", args=[review.test_case_id])).status_code == 404


def test_cycle_list_counts_each_review_once_whatever_the_flags(panel, client):
    """The list joins reviews and flags: with two flags, 18 reviews must still read 18, not 36."""
    cycle = review_cycle_open(panel=panel, name="Counted", user=panel.lead)
    for external_id in ("cath-00", "cath-01"):
        submit_all(cycle, TestCase.objects.get(external_id=external_id), [NO, NO, NO])
    assert cycle.flags.count() == 2
    client.force_login(panel.lead)
    row = [line for line in client.get(reverse("review:cycles")).content.decode().splitlines() if " / " in line]
    assert any("6 / 18" in line for line in row), row
