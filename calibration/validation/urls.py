"""The judge validation programme: the status page, its exports, checks and pairwise runs. Included by
calibration/urls.py without a namespace, so names stay `calibration:<name>`."""
from django.urls import path

from . import views

urlpatterns = [
    path("validation/", views.validation, name="validation"),
    path("views.<str:fmt>", views.validation_export, name="validation_export"),
    path("validation/checks/<str:kind>/run/", views.validation_check_run, name="validation_check_run"),
    path("validation/translations/", views.translation_equivalence, name="translation_equivalence"),
    path("validation/translations.csv", views.translation_equivalence_export, name="translation_equivalence_export"),
    path("validation/pairwise/new/", views.pairwise_start, name="pairwise_start"),
    path("validation/pairwise/<int:pk>/", views.pairwise_run, name="pairwise_run"),
    path("validation/pairwise/<int:pk>/retry/", views.pairwise_retry, name="pairwise_retry"),
]
