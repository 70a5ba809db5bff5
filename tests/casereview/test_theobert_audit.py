"""The TheoBERT expert audit: assignment, blind submission, κ among experts and against the scorer, re-scoring
without the cases the experts reject (side by side), and the admin page."""
from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.urls import reverse

from accounts.models import User
from casereview.models import TheoBertAudit
from casereview.rules import ReviewError
from casereview.services import audit_submit, audits_assign
from casereview.theobert import audit_agreement, rejected_cases, rescore_without_rejected, side_by_side
from evaluations.models import TheoBertCase, TheoBertRun
from stats.kappa import cohen_kappa, fleiss_kappa
from tests.annotations.factories import person, tradition

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(tmp_path):
    for i in range(6):
        TheoBertCase.objects.create(case_id=f"DOC_{i:03d}", type="doctrinal_association", category="soteriology",
                                    difficulty="easy", input="the [MASK] .", targets=["cross"],
                                    pass_condition="target_in_top_k", k=1)
    # cases 0–2 pass (cross first), 3–5 fail
    predictions = [{"id": f"DOC_{i:03d}", "top": ["cross", "sin"] if i < 3 else ["sin", "cross"]} for i in range(6)]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"model": "theo", "predictions": predictions}))
    call_command("theobert_score", "--predictions", str(path), "--no-progress", "--resamples", "100")
    return TheoBertRun.objects.get()


def test_assign_submit_agreement_and_rescore(run):
    catholic = tradition("catholic")
    e1, e2 = person(tradition=catholic), person(tradition=catholic)
    assert audits_assign(run=run, experts=[e1, e2], per_case=2) == 12
    with pytest.raises(ReviewError, match="at least two"):
        audits_assign(run=run, experts=[e1, e2], per_case=1)
    audits = {(a.result.case.case_id, a.expert_id): a for a in TheoBertAudit.objects.select_related("result__case")}
    with pytest.raises(PermissionDenied):
        audit_submit(audit=audits[("DOC_000", e1.pk)], user=e2, case_sound="yes", verdict_right="yes")
    # e1: every case sound, every verdict right. e2: cases 4 and 5 unsound, verdict on case 5 wrong
    for i in range(6):
        audit_submit(audit=audits[(f"DOC_{i:03d}", e1.pk)], user=e1, case_sound="yes", verdict_right="yes")
        audit_submit(audit=audits[(f"DOC_{i:03d}", e2.pk)], user=e2, case_sound="no" if i >= 4 else "yes",
                     verdict_right="no" if i == 5 else "yes")
    with pytest.raises(ReviewError, match="already submitted"):
        audit_submit(audit=audits[("DOC_000", e1.pk)], user=e1, case_sound="no", verdict_right="no")
    # two auditors, one says unsound: no majority → not rejected; make the third opinion decide
    assert rejected_cases(run) == []
    e3 = person(tradition=catholic)
    for i in (4, 5):
        audit = TheoBertAudit.objects.create(result=run.results.get(case__case_id=f"DOC_{i:03d}"), expert=e3)
        audit_submit(audit=audit, user=e3, case_sound="no", verdict_right="yes")
    assert rejected_cases(run) == ["DOC_004", "DOC_005"]
    agreement = audit_agreement(run, n_resamples=200)
    # experts vs scorer: case 5 has 2 "right" (e1, e3) vs 1 "wrong": majority right, so every case agrees
    versus = agreement["experts_vs_scorer"]
    assert versus["units"] == 6 and versus["agreement"] == 1.0
    assert versus["kappa"] == pytest.approx(cohen_kappa([1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], categories=[0, 1]))
    assert versus["interval"] is not None
    among = agreement["among_experts"]["case_sound"]
    assert among["units"] == 6 and among["kappa"] < 0.5  # e2 and e3 disagree with e1 on cases 4–5
    # Fleiss' κ of (no 0, unsure 1, yes 2) per case, e1/e2/e3 on cases 4–5: the reference function's value
    sound = np.array([[2, 2, 2, 2, 2, 2], [2, 2, 2, 2, 0, 0], [np.nan] * 4 + [0, 0]])
    assert among["kappa"] == pytest.approx(fleiss_kappa(sound, categories=[0.0, 1.0, 2.0]), abs=1e-12)
    assert among["interval"] is not None and among["interval"][0] <= among["kappa"] <= among["interval"][1]
    rescored = rescore_without_rejected(run=run)
    assert rescored.rescored_from == run and rescored.excluded_cases == ["DOC_004", "DOC_005"]
    assert rescored.results.count() == 4 and rescored.results.filter(passed=True).count() == 3
    rows = {(r["axis"], r["group"]): r for r in side_by_side(run, rescored, n_resamples=100)}
    overall = rows[("overall", "all")]
    assert overall["before"]["pass_rate"] == pytest.approx(0.5) and overall["after"]["pass_rate"] == pytest.approx(0.75)


def test_audit_page_shows_prediction_and_verdict_only_to_its_expert(run, client):
    expert = person(tradition=tradition("catholic"))
    other = person(tradition=tradition("catholic"))
    audits_assign(run=run, experts=[expert, other], per_case=2)
    mine = TheoBertAudit.objects.filter(expert=expert).select_related("result__case").order_by("result__case__case_id").first()
    client.force_login(expert)
    page = client.get(reverse("review:audit", args=[mine.public_id]))
    body = page.content.decode()
    assert page.status_code == 200 and "the [MASK] ." in body and "Pass" in body
    response = client.post(reverse("review:audit", args=[mine.public_id]), {"case_sound": "yes", "verdict_right": "no"})
    assert response.status_code == 302
    mine.refresh_from_db()
    assert mine.verdict_right == "no"
    theirs = TheoBertAudit.objects.filter(expert=other).first()
    assert client.get(reverse("review:audit", args=[theirs.public_id])).status_code == 404
    admin = User.objects.create_superuser(email="tb-admin@faithbench.test", password="x")
    client.force_login(admin)
    page = client.get(reverse("review:theobert") + f"?run={run.pk}")
    assert page.status_code == 200 and "Experts' majority vs the scorer" in page.content.decode()
    client.post(reverse("review:theobert"), {"run": run.pk, "rescore": "1"})
    assert TheoBertRun.objects.filter(rescored_from=run).exists()


def test_the_audit_page_reads_stored_figures_kept_correct_when_audits_change(run, client, monkeypatch, immediate_tasks,
                                                                           django_capture_on_commit_callbacks):
    """No bootstrap on a page view: the summary is stored with the run, the agreement when an audit is submitted;
    an audit changed behind the services' back (the Django admin) is noticed and the figures recomputed once."""
    import casereview.theobert as audit_service
    import evaluations.theobert.services as run_services
    from casereview.tasks import theobert_audit_figures_task
    from casereview.theobert import audit_figures_read

    assert run.summary is not None and run.summary["cases"] == 6  # stored when scored
    catholic = tradition("catholic")
    e1, e2 = person(tradition=catholic), person(tradition=catholic)
    audits_assign(run=run, experts=[e1, e2], per_case=2)
    audits = list(TheoBertAudit.objects.select_related("expert").order_by("pk"))
    for audit in audits[1:]:
        audit_submit(audit=audit, user=audit.expert, case_sound="yes" if audit.expert == e1 else "no",
                     verdict_right="yes")
    assert theobert_audit_figures_task.call(run.pk) == {"run": run.pk, "updated": True}  # what the worker runs
    assert theobert_audit_figures_task.call(run.pk) == {"run": run.pk, "updated": False}  # idempotent
    # The last audit through its page: the page has the worker refresh the figures once the submission commits.
    first = audits[0]
    client.force_login(first.expert)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("review:audit", args=[first.public_id]),
                               {"case_sound": "yes" if first.expert == e1 else "no", "verdict_right": "yes"})
    assert response.status_code == 302
    run.refresh_from_db()
    stored = run.audit_figures["agreement"]
    assert stored["audits"] == 12 and stored["rejected"] == []  # 1 "no" of 2 is no majority
    assert stored == json.loads(json.dumps(audit_agreement(run, n_resamples=500)))

    calls = {"agreement": 0, "summary": 0}
    real_agreement, real_summary = audit_service.audit_agreement, run_services.theobert_run_summary

    def counted_agreement(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["agreement"] += 1
        return real_agreement(*args, **kwargs)

    def counted_summary(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["summary"] += 1
        return real_summary(*args, **kwargs)

    monkeypatch.setattr(audit_service, "audit_agreement", counted_agreement)
    monkeypatch.setattr(audit_service, "theobert_run_summary", counted_summary)
    monkeypatch.setattr(run_services, "theobert_run_summary", counted_summary)
    admin = User.objects.create_superuser(email="tb-admin2@faithbench.test", password="x")
    client.force_login(admin)
    for _ in range(3):
        page = client.get(reverse("review:theobert") + f"?run={run.pk}")
        assert page.status_code == 200 and "Experts' majority vs the scorer" in page.content.decode()
    assert calls == {"agreement": 0, "summary": 0}, "the page computed figures on a view"

    # An answer changed in the admin (no service call): the next view sees another fingerprint and recomputes once.
    TheoBertAudit.objects.filter(expert=e1, result__case__case_id="DOC_000").update(case_sound="no")
    client.get(reverse("review:theobert") + f"?run={run.pk}")
    client.get(reverse("review:theobert") + f"?run={run.pk}")
    assert calls["agreement"] == 1
    run.refresh_from_db()
    assert audit_figures_read(run)["rejected"] == ["DOC_000"]  # both auditors now call it unsound

    # Re-scoring stores the new run's summary with it; the side-by-side view reads both stored summaries.
    client.post(reverse("review:theobert"), {"run": run.pk, "rescore": "1"})
    rescored = TheoBertRun.objects.get(rescored_from=run)
    assert rescored.summary is not None and rescored.summary["cases"] == 5
    calls.update(agreement=0, summary=0)
    client.get(reverse("review:theobert") + f"?run={run.pk}")
    assert calls == {"agreement": 0, "summary": 0}
