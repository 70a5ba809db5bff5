"""Panel health and My calibration, included by `calibration/urls.py` (names stay `calibration:<name>`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("panel-health/", views.index, name="panel_health_index"),
    path("panel-health/<int:panel_id>/", views.panel, name="panel_health"),
    path("panel-health/<int:panel_id>/export.csv", views.export, name="panel_health_export"),
    path("my-calibration/", views.mine, name="my_calibration"),
]
