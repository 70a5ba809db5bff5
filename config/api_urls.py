"""The REST API under /api/v1/ (token or session auth; every endpoint checks its own permissions)."""
from django.urls import path

from calibration import api as calibration_api
from evaluations.judge import api as judge_api

urlpatterns = [
    path("gold-labels/", calibration_api.GoldLabelsAPIView.as_view(), name="api-gold-labels"),
    path("reports/cycles/<int:pk>/", calibration_api.ReportAPIView.as_view(), name="api-cycle-report"),
    path("reports/cycles/<int:pk>/versions/", calibration_api.ReportVersionsAPIView.as_view(),
         name="api-cycle-report-versions"),
    path("leaderboard/", judge_api.LeaderboardAPIView.as_view(), name="api-leaderboard"),
]
