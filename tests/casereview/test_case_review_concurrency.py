"""Case review under concurrency (PostgreSQL row locks): the last two reviewers of a case submitting at the same
moment raise exactly one flag; a close racing a submission either stores it first or refuses it."""
from __future__ import annotations

import pytest

from accounts.models import User
from annotations.models import Panel
from casereview.models import CaseFlag, CaseReview
from casereview.rules import ReviewAnswers
from casereview.services import case_review_submit, review_cycle_close, review_cycle_open
from tests.annotations.factories import CaseFactory, person, tradition
from tests.concurrency import run_together

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NO = ReviewAnswers(valid="no", reference_correct="no", difficulty="medium", clarity=1)


def together(*calls):  # type: ignore[no-untyped-def]
    """The calls at one moment (tests/concurrency.py): "ok", or a refusal with its message."""
    return run_together(*(lambda call=call: (call(), "ok")[1] for call in calls),
                        refused=lambda exc: " ".join(exc.messages))


def world():  # type: ignore[no-untyped-def]
    catholic = tradition("catholic")
    panel = Panel.objects.create(name="Catholic panel", tradition=catholic,
                                 lead=person(User.Role.ADJUDICATOR, tradition=catholic))
    panel.members.set([person(tradition=catholic) for _ in range(3)])
    case = CaseFactory(tradition=catholic)
    cycle = review_cycle_open(panel=panel, name="race", user=panel.lead)
    return cycle, list(CaseReview.objects.filter(cycle=cycle, test_case=case).order_by("pk"))


@pytest.mark.parametrize("attempt", range(2))
def test_last_two_reviewers_at_once_raise_one_flag(attempt, monkeypatch):  # type: ignore[no-untyped-def]
    """Each submission pauses after judging the case and before committing (as a slow server might): without the
    lock on the case's reviews both would judge before either committed, see the other's review unsubmitted, and
    raise no flag."""
    import time

    import casereview.services as review_module

    judge = review_module.case_judge

    def slow_judge(**kwargs):  # type: ignore[no-untyped-def]
        flag = judge(**kwargs)
        time.sleep(0.3)
        return flag

    monkeypatch.setattr(review_module, "case_judge", slow_judge)
    cycle, reviews = world()
    case_review_submit(review=reviews[0], user=reviews[0].expert, answers=NO)
    outcomes = together(*(lambda r=r: case_review_submit(review=r, user=r.expert, answers=NO) for r in reviews[1:]))
    assert outcomes == ["ok", "ok"]
    assert CaseFlag.objects.filter(cycle=cycle).count() == 1


def test_close_racing_a_submission():  # type: ignore[no-untyped-def]
    cycle, reviews = world()
    outcomes = together(lambda: case_review_submit(review=reviews[0], user=reviews[0].expert, answers=NO),
                        lambda: review_cycle_close(cycle=cycle, user=None))
    stored = CaseReview.objects.get(pk=reviews[0].pk).submitted_at is not None
    assert outcomes[1] == "ok"
    assert (outcomes[0] == "ok") == stored
    assert outcomes[0] in ("ok", "refused:this review cycle is closed")
