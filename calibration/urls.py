from django.urls import include, path

app_name = "calibration"

# Each room owns its URLs; the rooms' modules have no app_name, so every name stays `calibration:<name>`.
urlpatterns = [
    path("", include("calibration.cycles.urls")),
    path("", include("calibration.adjudication.urls")),
    path("", include("calibration.reports.urls")),
    path("", include("calibration.studies.urls")),
    path("", include("calibration.validation.urls")),
    path("", include("calibration.panelhealth.urls")),
]
