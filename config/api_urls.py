"""The REST API under /api/v1/ (token or session auth; every endpoint gets the settings' one permission,
access.policy.ApiPermission: its policy action and, for a token, its token_scope)."""
from django.urls import path

from calibration import api as calibration_api
from calibration.adjudication import api as adjudication_api
from calibration.calibrated import api as calibrated_api
from calibration.studies import api as studies_api
from evaluations import api as evaluations_api
from evaluations.judge import api as judge_api

urlpatterns = [
    path("cases/", evaluations_api.CasesBulkAPIView.as_view(), name="api-cases"),
    path("responses/", evaluations_api.ResponsesBulkAPIView.as_view(), name="api-responses"),
    path("judge-runs/", evaluations_api.JudgeRunsAPIView.as_view(), name="api-judge-runs"),
    path("judge-runs/<int:pk>/", evaluations_api.JudgeRunAPIView.as_view(), name="api-judge-run"),
    path("judge-runs/<int:pk>/cancel/", evaluations_api.JudgeRunCancelAPIView.as_view(), name="api-judge-run-cancel"),
    path("judge-runs/<int:pk>/resume/", evaluations_api.JudgeRunResumeAPIView.as_view(), name="api-judge-run-resume"),
    path("judge-runs/<int:pk>/retry/", evaluations_api.JudgeRunRetryAPIView.as_view(), name="api-judge-run-retry"),
    path("judge-runs/<int:pk>/calibrated/", calibrated_api.CalibratedAPIView.as_view(), name="api-calibrated"),
    path("judge-runs/<int:pk>/calibrated/versions/", calibrated_api.CalibratedVersionsAPIView.as_view(),
         name="api-calibrated-versions"),
    path("judge-runs/<int:pk>/calibrated/bundle/", calibrated_api.CalibratedBundleAPIView.as_view(),
         name="api-calibrated-bundle"),
    path("studies/", studies_api.StudiesAPIView.as_view(), name="api-studies"),
    path("studies/<int:pk>/ratings/", studies_api.StudyRatingsAPIView.as_view(), name="api-study-ratings"),
    path("studies/<int:pk>/judge-runs/", studies_api.StudyJudgeRunsAPIView.as_view(), name="api-study-judge-runs"),
    path("studies/judge-runs/<int:pk>/", studies_api.StudyJudgeRunAPIView.as_view(), name="api-study-judge-run"),
    path("studies/judge-runs/<int:pk>/cancel/", studies_api.StudyJudgeRunCancelAPIView.as_view(),
         name="api-study-judge-run-cancel"),
    path("gold-labels/", adjudication_api.GoldLabelsAPIView.as_view(), name="api-gold-labels"),
    path("reports/", calibration_api.ReportsAPIView.as_view(), name="api-reports"),
    path("reports/cycles/<int:pk>/", calibration_api.ReportAPIView.as_view(), name="api-cycle-report"),
    path("reports/cycles/<int:pk>/bundle/", calibration_api.ReportBundleAPIView.as_view(), name="api-cycle-report-bundle"),
    path("reports/cycles/<int:pk>/versions/", calibration_api.ReportVersionsAPIView.as_view(),
         name="api-cycle-report-versions"),
    path("reports/studies/<int:pk>/", calibration_api.StudyReportAPIView.as_view(), name="api-study-report"),
    path("reports/studies/<int:pk>/bundle/", calibration_api.StudyReportBundleAPIView.as_view(),
         name="api-study-report-bundle"),
    path("reports/studies/<int:pk>/versions/", calibration_api.StudyReportVersionsAPIView.as_view(),
         name="api-study-report-versions"),
    path("leaderboard/", judge_api.LeaderboardAPIView.as_view(), name="api-leaderboard"),
    path("judge-runs/<int:pk>/conditions/", judge_api.ConditionsAPIView.as_view(), name="api-judge-run-conditions"),
]
