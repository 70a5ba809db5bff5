"""Imported rating studies: the list, the three upload steps, the report pages and the judge runs. Included by
calibration/urls.py without a namespace, so names stay `calibration:<name>`."""
from django.urls import path

from . import views

urlpatterns = [
    path("studies/", views.studies, name="studies"),
    path("studies/upload/", views.study_upload, name="study_upload"),
    path("studies/upload/mapping/", views.study_upload_mapping, name="study_upload_mapping"),
    path("studies/upload/confirm/", views.study_upload_confirm, name="study_upload_confirm"),
    path("studies/<int:pk>/report/", views.study_report, name="study_report"),
    path("studies/<int:pk>/report/versions/", views.study_report_compute, name="study_report_compute"),
    path("studies/<int:pk>/report/versions/<int:version>/progress/", views.study_report_progress,
         name="study_report_progress"),
    path("studies/<int:pk>/report.<str:fmt>", views.study_report_download, name="study_report_export"),
    path("studies/<int:pk>/judge/", views.study_judge, name="study_judge"),
    path("studies/<int:pk>/judge/<int:run_id>/cancel/", views.study_judge_cancel, name="study_judge_cancel"),
]
