from django.urls import include, path

from .reports import views as reports
from .studies import views as studies
from .validation import views as validation

app_name = "calibration"

# Each room owns its URLs; the rooms' modules have no app_name, so every name stays `calibration:<name>`.
urlpatterns = [
    path("", include("calibration.cycles.urls")),
    path("", include("calibration.adjudication.urls")),
    path("cycles/<int:pk>/report/", reports.report, name="report"),
    path("cycles/<int:pk>/report/versions/", reports.report_compute, name="report_compute"),
    path("cycles/<int:pk>/report/versions/<int:version>/progress/", reports.report_progress, name="report_progress"),
    path("cycles/<int:pk>/report.<str:fmt>", reports.report_download, name="report_export"),
    path("studies/", studies.studies, name="studies"),
    path("studies/upload/", studies.study_upload, name="study_upload"),
    path("studies/upload/mapping/", studies.study_upload_mapping, name="study_upload_mapping"),
    path("studies/upload/confirm/", studies.study_upload_confirm, name="study_upload_confirm"),
    path("studies/<int:pk>/report/", studies.study_report, name="study_report"),
    path("studies/<int:pk>/report/versions/", studies.study_report_compute, name="study_report_compute"),
    path("studies/<int:pk>/report/versions/<int:version>/progress/", studies.study_report_progress,
         name="study_report_progress"),
    path("studies/<int:pk>/report.<str:fmt>", studies.study_report_download, name="study_report_export"),
    path("studies/<int:pk>/judge/", studies.study_judge, name="study_judge"),
    path("studies/<int:pk>/judge/<int:run_id>/cancel/", studies.study_judge_cancel, name="study_judge_cancel"),
    path("validation/", validation.validation, name="validation"),
    path("validation.<str:fmt>", validation.validation_export, name="validation_export"),
    path("validation/checks/<str:kind>/run/", validation.validation_check_run, name="validation_check_run"),
    path("validation/pairwise/new/", validation.pairwise_start, name="pairwise_start"),
    path("validation/pairwise/<int:pk>/", validation.pairwise_run, name="pairwise_run"),
    path("validation/pairwise/<int:pk>/retry/", validation.pairwise_retry, name="pairwise_retry"),
]
