"""A cycle's IRR report pages (calibration:report…): one evidence.views.SnapshotPages. Included by
calibration/urls.py without a namespace, so names stay `calibration:<name>`."""
from django.urls import path

from . import views

urlpatterns = [
    path("cycles/<int:pk>/report/", views.report, name="report"),
    path("cycles/<int:pk>/report/versions/", views.report_compute, name="report_compute"),
    path("cycles/<int:pk>/report/versions/<int:version>/progress/", views.report_progress, name="report_progress"),
    path("cycles/<int:pk>/report.<str:fmt>", views.report_download, name="report_export"),
]
