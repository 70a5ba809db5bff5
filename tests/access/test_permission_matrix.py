"""Every URL of accounts, annotations and calibration × every role: allowed or denied, as designed."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import get_resolver, reverse

from access.policy import URL_ACTIONS
from tests.access.permission_matrix import Case, extra_identities, matrix_failures, roles

pytestmark = pytest.mark.django_db

OWN_APPS = ("accounts", "annotations", "calibration", "delphi", "judge", "review")
# allauth's pages that the app links to (the rest of allauth behaves like these: login or allow).
ALLAUTH_NAMES = (
    "account_login", "account_signup", "account_logout", "account_reset_password", "account_email",
    "account_change_password", "mfa_index", "mfa_activate_totp",
)


@pytest.fixture
def clients(world) -> dict[str, Client]:  # type: ignore[no-untyped-def]
    result = {"anonymous": Client()}
    for role, user in (("expert", world.expert), ("other_panel_expert", world.other_panel_expert),
                       ("adjudicator", world.lead), ("admin", world.admin), *extra_identities().items()):
        client = Client()
        client.force_login(user)
        result[role] = client
    return result


def build_cases(world) -> list[Case]:  # type: ignore[no-untyped-def]
    mine = world.assignments(world.expert)
    item, skip_item = mine[0].public_id, mine[1].public_id
    catholic = next(m.public_id for m in mine if m.panel_id == world.catholic.pk)

    def a(name: str, public_id: str = item) -> str:
        return reverse(f"annotations:{name}", kwargs={"public_id": public_id})

    staff_only = roles("login", "403", "403", "403", "allow")
    from evaluations.models import JudgeRun

    judge_run = JudgeRun.objects.create(rubric=world.cycle.rubric, primary_model="j", base_url="http://127.0.0.1:9/v1")
    from evaluations.models import PairwiseRun

    pairwise_run = PairwiseRun.objects.create(model="j", base_url="http://127.0.0.1:9/v1", total=2)
    from calibration.reports.snapshots import report_snapshot_compute, report_snapshot_request

    snapshot = report_snapshot_request(cycle=world.cycle, requested_by=world.admin, n_resamples=0)
    report_snapshot_compute(snapshot_id=snapshot.pk)
    signed_in = roles("login", "allow", "allow", "allow", "allow")
    from calibration.models import Study, StudyDimension, StudyItem, StudyRater, StudyScore
    from calibration.studies.snapshots import study_snapshot_compute, study_snapshot_request

    study = Study.objects.create(name="Matrix study")
    dimension = StudyDimension.objects.create(study=study, key="quality")
    raters = [StudyRater.objects.create(study=study, name=n) for n in ("h1", "h2")]
    for i in range(3):
        item = StudyItem.objects.create(study=study, external_id=f"i{i}")
        StudyScore.objects.bulk_create(StudyScore(item=item, dimension=dimension, rater=r, value=i) for r in raters)
    study_snapshot = study_snapshot_compute(
        snapshot_id=study_snapshot_request(study=study, requested_by=None, n_resamples=0).pk)
    from accounts.services import api_token_create

    admin_token, _secret = api_token_create(user=world.admin, name="matrix", scopes=["reports:read"])
    own_item = roles("login", "allow", "404", "404", "404")
    from casereview.models import CaseFlag, CaseReview, TheoBertAudit
    from casereview.services import review_cycle_open
    from evaluations.models import TheoBertCase, TheoBertResult, TheoBertRun

    review_cycle = review_cycle_open(panel=world.catholic, name="Matrix review", user=world.lead)
    my_review = CaseReview.objects.filter(cycle=review_cycle, expert=world.expert).first()
    review_flag = CaseFlag.objects.create(cycle=review_cycle, test_case=my_review.test_case, case_version=1,
                                          reasons=["low_agreement"])
    tb_case = TheoBertCase.objects.create(case_id="M_001", type="doctrinal_association", category="soteriology",
                                          difficulty="easy", input="the [MASK] .", targets=["cross"],
                                          pass_condition="target_in_top_k")
    tb_run = TheoBertRun.objects.create(label="m", source="file", source_name="m.json")
    tb_result = TheoBertResult.objects.create(run=tb_run, case=tb_case, passed=True, k=5, ranked=[["cross", 0.5]])
    my_audit = TheoBertAudit.objects.create(result=tb_result, expert=world.expert)
    lead_only = roles("login", "404", "404", "allow", "allow")
    return [
        # test-case review: the reviewer's own pages; the panel's lead and admins for the rest
        Case("review:queue", reverse("review:queue"), signed_in),
        Case("review:case", reverse("review:case", args=[my_review.public_id]), own_item),
        Case("review:case", reverse("review:case", args=[my_review.public_id]), own_item, method="post"),
        Case("review:audit", reverse("review:audit", args=[my_audit.public_id]), own_item),
        Case("review:cycles", reverse("review:cycles"), roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("review:cycle", reverse("review:cycle", args=[review_cycle.pk]), lead_only),
        Case("review:cycle_report", reverse("review:cycle_report", args=[review_cycle.pk]), lead_only, method="post"),
        Case("review:flag", reverse("review:flag", args=[review_flag.pk]), lead_only),
        Case("review:case_history", reverse("review:case_history", args=[my_review.test_case_id]),
             roles("login", "403", "403", "allow", "allow", panel_lead="404")),
        Case("review:theobert", reverse("review:theobert"), staff_only),
        Case("review:difficulty", reverse("review:difficulty"), staff_only),
        # the project's own pages outside the apps' namespaces
        Case("home", reverse("home"), roles("allow", "allow", "allow", "allow", "allow")),
        Case("help", reverse("help"), signed_in),
        Case("set_language", reverse("set_language"), roles("allow", "allow", "allow", "allow", "allow"),
             method="post", data={"language": "en", "next": "/"}),
        Case("help_topic", reverse("help_topic", args=["scoring-and-blinding"]), signed_in),
        # help topics by role (config/help.py): admins' topics name models and judges, so experts get 404
        Case("help_topic", reverse("help_topic", args=["judge-pipeline"]),
             roles("login", "404", "404", "404", "allow", panel_lead="404")),
        Case("help_topic", reverse("help_topic", args=["reports"]),
             roles("login", "404", "404", "allow", "allow", panel_lead="allow")),
        # the audit trail: admins only
        Case("audit_log", reverse("audit_log"), staff_only),
        Case("audit_log_export", reverse("audit_log_export"), staff_only),
        Case("evaluations:index", reverse("evaluations:index"), roles("allow", "allow", "allow", "allow", "allow")),
        Case("api-schema", reverse("api-schema"), roles("403", "403", "403", "403", "allow")),
        Case("api-docs", reverse("api-docs"), staff_only),
        # signed-in non-admins get 403 rather than a sign-in loop; admins go on to the admin site
        Case("admin_login_via_allauth", reverse("admin_login_via_allauth"),
             roles("login", "403", "403", "403", "allow")),
        Case("admin:index", reverse("admin:index"), roles(*["admin-login"] * 4, "allow")),
        Case("admin:evaluations_testcase_changelist", reverse("admin:evaluations_testcase_changelist"),
             roles(*["admin-login"] * 4, "allow", staff="403")),  # staff without model permissions
        # accounts (ours)
        Case("accounts:profile", reverse("accounts:profile"), signed_in),
        Case("accounts:api_tokens", reverse("accounts:api_tokens"), signed_in),
        Case("accounts:inbox", reverse("accounts:inbox"), signed_in),
        Case("accounts:my_data", reverse("accounts:my_data"), signed_in),  # one's own data only: no id in the URL
        Case("accounts:inbox", reverse("accounts:inbox"), roles("login", "allow", "allow", "allow", "allow"),
             method="post"),  # marks one's own notifications read
        # A token is revoked only by its owner (here the admin); anyone else gets 404, GET is 405.
        Case("accounts:api_token_revoke", reverse("accounts:api_token_revoke", args=[admin_token.pk]),
             roles("login", "404", "404", "404", "allow", staff="404"), method="post"),
        Case("accounts:api_token_revoke", reverse("accounts:api_token_revoke", args=[admin_token.pk]),
             roles("login", "405", "405", "405", "405")),
        Case("accounts:invitation_accept", reverse("accounts:invitation_accept", kwargs={"token": "not-a-token"}),
             roles("404", "allow", "allow", "allow", "allow")),
        # allauth
        Case("account_login", reverse("account_login"), roles("allow", "allow", "allow", "allow", "allow")),
        Case("account_signup", reverse("account_signup"), roles("allow", "allow", "allow", "allow", "allow")),
        Case("account_logout", reverse("account_logout"), roles("allow", "allow", "allow", "allow", "allow")),
        Case("account_reset_password", reverse("account_reset_password"),
             roles("allow", "allow", "allow", "allow", "allow")),
        Case("account_email", reverse("account_email"), signed_in),
        Case("account_change_password", reverse("account_change_password"), signed_in),
        Case("mfa_index", reverse("mfa_index"), signed_in),
        Case("mfa_activate_totp", reverse("mfa_activate_totp"), signed_in),
        # annotations: the expert's own queue and items
        Case("annotations:queue", reverse("annotations:queue"), signed_in),
        Case("annotations:next", reverse("annotations:next"), signed_in),
        Case("annotations:lead", reverse("annotations:lead"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        # panel health: admins and the panel's own lead (anyone else: 404); my calibration: one's own feedback
        Case("calibration:panel_health_index", reverse("calibration:panel_health_index"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibration:panel_health", reverse("calibration:panel_health", args=[world.catholic.pk]),
             roles("login", "404", "404", "allow", "allow")),
        Case("calibration:panel_health_export", reverse("calibration:panel_health_export", args=[world.catholic.pk]),
             roles("login", "404", "404", "allow", "allow")),
        Case("calibration:my_calibration", reverse("calibration:my_calibration"), signed_in),
        Case("annotations:item", a("item"), own_item),
        Case("annotations:item", a("item"), own_item, htmx=True),
        Case("annotations:draft", a("draft"), own_item, method="post", data={"score-doctrinalAccuracy": "2"}),
        Case("annotations:heartbeat", a("heartbeat"), own_item, method="post", data={"seconds": "5"}),
        Case("annotations:submit", a("submit"), own_item, method="post"),  # incomplete → 422 for the owner
        # the owner skips first; nobody else can touch the item afterwards either
        Case("annotations:skip", a("skip", skip_item), roles("login", "allow", "404", "404", "404"), method="post"),
        # undo of an item that is not finished: 409 for its expert, 404 for everyone else
        Case("annotations:undo", a("undo"), own_item, method="post"),
        Case("annotations:item", a("item", "x" * 22), roles("login", "404", "404", "404", "404")),
        # reopen: the panel lead and admins only; the expert gets 404, not 403
        Case("annotations:reopen", a("reopen", skip_item), roles("login", "404", "404", "allow", "allow"),
             method="post"),
        Case("annotations:draft", a("draft"), roles("login", "405", "405", "405", "405")),  # GET on a POST URL
        # reassignment: the panel's lead and staff; everyone else gets 404 for the assignment, 403 for the list
        Case("annotations:lead_assignments", reverse("annotations:lead_assignments"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("annotations:reassign", a("reassign", catholic), roles("login", "404", "404", "allow", "allow")),
        Case("annotations:reassign", a("reassign", catholic), roles("login", "404", "404", "allow", "allow"),
             method="post"),  # no choice posted: a form error (422), nothing changes
        # calibration: staff only
        Case("calibration:index", reverse("calibration:index"), staff_only),
        Case("calibration:panels", reverse("calibration:panels"), staff_only),
        Case("calibration:draw", reverse("calibration:draw"), staff_only),
        Case("calibration:draw", reverse("calibration:draw"), staff_only, method="post",
             data={"name": "Matrix preview", "seed": "1", "min_per_dimension": "5", "refresh_fraction": "0.25",
                   "edge_fraction": "0.10", "action": "preview"}),
        Case("calibration:cycle", reverse("calibration:cycle", kwargs={"pk": world.cycle.pk}), staff_only),
        Case("calibration:progress", reverse("calibration:progress"), staff_only),
        Case("calibration:gold_export", reverse("calibration:gold_export", kwargs={"pk": world.cycle.pk}), staff_only),
        Case("calibration:report", reverse("calibration:report", kwargs={"pk": world.cycle.pk}), staff_only),
        Case("calibration:report_export",
             reverse("calibration:report_export", kwargs={"pk": world.cycle.pk, "fmt": "json"}), staff_only),
        Case("calibration:report_compute", reverse("calibration:report_compute", kwargs={"pk": world.cycle.pk}),
             staff_only, method="post", data={"seed": "1", "n_resamples": "0"}),
        Case("calibration:report_progress",
             reverse("calibration:report_progress", kwargs={"pk": world.cycle.pk, "version": snapshot.version}),
             staff_only),
        Case("calibration:studies", reverse("calibration:studies"), staff_only),
        Case("calibration:validation", reverse("calibration:validation"), staff_only),
        Case("calibration:validation_export", reverse("calibration:validation_export", args=["csv"]), staff_only),
        Case("calibration:translation_equivalence", reverse("calibration:translation_equivalence"), staff_only),
        Case("calibration:translation_equivalence_export", reverse("calibration:translation_equivalence_export"),
             staff_only),
        Case("calibration:study_report", reverse("calibration:study_report", kwargs={"pk": study.pk}), staff_only),
        Case("calibration:study_upload", reverse("calibration:study_upload"), staff_only),
        Case("calibration:study_upload", reverse("calibration:study_upload"), staff_only, method="post"),
        Case("calibration:study_upload_mapping", reverse("calibration:study_upload_mapping"), staff_only),
        Case("calibration:study_upload_confirm", reverse("calibration:study_upload_confirm"), staff_only),
        Case("calibration:study_upload_confirm", reverse("calibration:study_upload_confirm"), staff_only,
             method="post"),
        Case("calibration:study_report_export",
             reverse("calibration:study_report_export", kwargs={"pk": study.pk, "fmt": "pdf"}), staff_only),
        Case("calibration:study_report_compute", reverse("calibration:study_report_compute", kwargs={"pk": study.pk}),
             staff_only, method="post", data={"seed": "1", "n_resamples": "0"}),
        Case("calibration:study_report_progress",
             reverse("calibration:study_report_progress", kwargs={"pk": study.pk, "version": study_snapshot.version}),
             staff_only),
        Case("calibration:study_judge", reverse("calibration:study_judge", kwargs={"pk": study.pk}),
             staff_only, method="post", data={"model": "h1"}),  # a human rater's name: refused (422) for admins
        Case("calibration:study_judge_cancel",
             reverse("calibration:study_judge_cancel", kwargs={"pk": study.pk, "run_id": 999_999}),
             roles("login", "403", "403", "403", "404"), method="post"),
        Case("api-cycle-report", reverse("api-cycle-report", kwargs={"pk": world.cycle.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-cycle-report-bundle", reverse("api-cycle-report-bundle", kwargs={"pk": world.cycle.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-cycle-report-versions", reverse("api-cycle-report-versions", kwargs={"pk": world.cycle.pk}),
             roles("403", "403", "403", "403", "allow")),
        # adjudication: leads of the item's panel who did not rate it, and admins; raters get 404
        Case("calibration:adjudication_queue", reverse("calibration:adjudication_queue"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibration:adjudication_item", reverse("calibration:adjudication_item", kwargs={"item_id": mine[0].item_id}),
             roles("login", "404", "404", "allow", "allow")),
        Case("calibration:adjudication_item", reverse("calibration:adjudication_item", kwargs={"item_id": 10**9}),
             roles("login", "404", "404", "404", "404")),
        Case("calibration:adjudication_reopen",
             reverse("calibration:adjudication_reopen", kwargs={"item_id": mine[1].item_id, "public_id": skip_item}),
             roles("login", "404", "404", "allow", "allow"), method="post"),
        # the judge pipeline: staff only (experts must never see judge output)
        Case("judge:run_list", reverse("judge:run_list"), staff_only),
        Case("judge:run_detail", reverse("judge:run_detail", kwargs={"pk": judge_run.pk}), staff_only),
        Case("judge:run_detail", reverse("judge:run_detail", kwargs={"pk": judge_run.pk}), staff_only, htmx=True),
        Case("judge:leaderboard", reverse("judge:leaderboard"), staff_only),
        # condition leaderboards and deltas: admins and panel leads, never experts (blind scoring); the run is not
        # finished, so its CSV is a 404 for those allowed
        Case("judge:conditions", reverse("judge:conditions"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("api-judge-run-conditions", reverse("api-judge-run-conditions", kwargs={"pk": judge_run.pk}),
             roles("403", "403", "403", "403", "404")),  # admins only, like every API; the run is not finished
        Case("judge:conditions_export", reverse("judge:conditions_export", kwargs={"run_id": judge_run.pk}),
             roles("login", "403", "403", "404", "404", panel_lead="404")),
        Case("judge:run_cancel", reverse("judge:run_cancel", kwargs={"pk": judge_run.pk}), staff_only, method="post"),
        Case("judge:run_start", reverse("judge:run_start"), staff_only),
        Case("judge:run_start", reverse("judge:run_start"), staff_only, method="post"),  # empty: 422 for admins
        Case("judge:run_resume", reverse("judge:run_resume", kwargs={"pk": judge_run.pk}), staff_only, method="post"),
        Case("judge:run_retry", reverse("judge:run_retry", kwargs={"pk": judge_run.pk}), staff_only, method="post"),
        Case("judge:run_repeat", reverse("judge:run_repeat", kwargs={"pk": judge_run.pk}), staff_only, method="post"),
        Case("calibration:validation_check_run", reverse("calibration:validation_check_run", args=["verbosity"]),
             staff_only, method="post"),  # no run chosen: 422 for admins
        Case("calibration:pairwise_start", reverse("calibration:pairwise_start"), staff_only),
        Case("calibration:pairwise_run", reverse("calibration:pairwise_run", kwargs={"pk": pairwise_run.pk}),
             staff_only),
        Case("calibration:pairwise_retry", reverse("calibration:pairwise_retry", kwargs={"pk": pairwise_run.pk}),
             staff_only, method="post"),
        Case("api-leaderboard", reverse("api-leaderboard"), roles("403", "403", "403", "403", "404")),
        # the write API: admins only (an empty list is a 400 for them; nothing is written)
        Case("api-cases", reverse("api-cases"), roles("403", "403", "403", "403", "allow"), method="post"),
        Case("api-responses", reverse("api-responses"), roles("403", "403", "403", "403", "allow"), method="post"),
        Case("api-judge-runs", reverse("api-judge-runs"), roles("403", "403", "403", "403", "allow"), method="post",
             data={"limit": "0"}),  # a 400 for the admin: nothing starts
        Case("api-judge-run", reverse("api-judge-run", kwargs={"pk": judge_run.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-judge-run-cancel", reverse("api-judge-run-cancel", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post"),
        Case("api-judge-run-resume", reverse("api-judge-run-resume", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post"),
        Case("api-judge-run-retry", reverse("api-judge-run-retry", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post"),
        Case("api-studies", reverse("api-studies"), roles("403", "403", "403", "403", "allow")),
        Case("api-studies", reverse("api-studies"), roles("403", "403", "403", "403", "allow"), method="post"),
        Case("api-study-ratings", reverse("api-study-ratings", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post"),
        Case("api-study-report", reverse("api-study-report", kwargs={"pk": study.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-study-report-bundle", reverse("api-study-report-bundle", kwargs={"pk": study.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-study-report-versions", reverse("api-study-report-versions", kwargs={"pk": study.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-study-judge-runs", reverse("api-study-judge-runs", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post", data={"model": "m"}),
        Case("api-study-judge-run", reverse("api-study-judge-run", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404")),
        Case("api-study-judge-run-cancel", reverse("api-study-judge-run-cancel", kwargs={"pk": 999_999}),
             roles("403", "403", "403", "403", "404"), method="post"),
        # requesting a report: a validation error (400) for admins once in; the study does not exist → 404
        Case("api-reports", reverse("api-reports"), roles("403", "403", "403", "403", "404"), method="post",
             data={"study": 999_999}),
        # the pipeline's API: admins only (token or session)
        Case("api-gold-labels", reverse("api-gold-labels"), roles("403", "403", "403", "403", "allow")),
        # the calibrated leaderboard: admins and panel leads, never experts (blind scoring); queuing: admins only
        Case("calibrated:index", reverse("calibrated:index"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibrated:board", reverse("calibrated:board", kwargs={"run_id": judge_run.pk}),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibrated:compute", reverse("calibrated:compute", kwargs={"run_id": judge_run.pk}),
             staff_only, method="post", data={"cycle": str(world.cycle.pk)}),  # the run is not finished: 422
        Case("calibrated:progress", reverse("calibrated:progress", kwargs={"run_id": judge_run.pk, "version": 9}),
             roles("login", "403", "403", "404", "404", panel_lead="404")),
        Case("calibrated:export", reverse("calibrated:export", kwargs={"run_id": judge_run.pk, "fmt": "json"}),
             roles("login", "403", "403", "404", "404", panel_lead="404")),
        Case("calibrated:budget", reverse("calibrated:budget", kwargs={"run_id": judge_run.pk}),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibrated:budget_export", reverse("calibrated:budget_export", kwargs={"run_id": judge_run.pk}),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibrated:history", reverse("calibrated:history"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("calibrated:history_export", reverse("calibrated:history_export"),
             roles("login", "403", "403", "allow", "allow", panel_lead="allow")),
        Case("api-calibrated", reverse("api-calibrated", kwargs={"pk": judge_run.pk}),
             roles("403", "403", "403", "403", "404")),
        Case("api-calibrated-versions", reverse("api-calibrated-versions", kwargs={"pk": judge_run.pk}),
             roles("403", "403", "403", "403", "allow")),
        Case("api-calibrated-bundle", reverse("api-calibrated-bundle", kwargs={"pk": judge_run.pk}),
             roles("403", "403", "403", "403", "404")),
    ]


def test_every_url_of_the_policy_table_is_in_the_matrix(world) -> None:  # type: ignore[no-untyped-def]
    """The policy table names every URL of ours (tests/access/test_policy.py); each has a row here (the Delphi
    URLs in tests/delphi/test_permissions.py, which needs a study)."""
    covered = {case.name for case in build_cases(world)}
    resolver = get_resolver()
    ours = {
        f"{namespace}:{name}"
        for namespace in OWN_APPS
        for name in resolver.namespace_dict[namespace][1].reverse_dict
        if isinstance(name, str)
    }
    assert ours - set(URL_ACTIONS) == set(), "add these URLs to access.policy.URL_ACTIONS"
    assert {name for name in URL_ACTIONS if not name.startswith("delphi:")} - covered == set(), \
        "add these URLs to the permission matrix"
    assert set(ALLAUTH_NAMES) - covered == set()


def test_permission_matrix(world, clients) -> None:  # type: ignore[no-untyped-def]
    failures = matrix_failures(build_cases(world), clients)
    assert failures == [], "\n" + "\n".join(failures)


def test_expert_cannot_open_another_experts_assignment(client, world) -> None:  # type: ignore[no-untyped-def]
    theirs = world.assignments(world.other_expert)[0]
    client.force_login(world.expert)
    for name in ("item", "draft", "heartbeat", "submit", "skip", "undo"):
        method = client.get if name == "item" else client.post
        response = method(reverse(f"annotations:{name}", kwargs={"public_id": theirs.public_id}))
        assert response.status_code == 404, name


def test_admin_login_goes_through_allauth(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/admin/login/?next=/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert "next=/admin/" in response["Location"]


def test_signed_in_non_staff_get_403_from_the_admin_not_a_redirect_loop(client, world) -> None:  # type: ignore[no-untyped-def]
    client.force_login(world.expert)
    response = client.get("/admin/", follow=True)
    assert response.status_code == 403
    client.force_login(world.admin)
    assert client.get("/admin/login/?next=/admin/")["Location"] == "/admin/"
    assert client.get("/admin/login/?next=https://evil.example/")["Location"] == "/admin/"
