"""The cycle pages (overview, panels, drawing, one cycle, progress), included by `calibration/urls.py` without a
namespace of their own, so their names stay `calibration:<name>` (access.policy.URL_ACTIONS keys)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="index"),
    path("panels/", views.panels, name="panels"),
    path("cycles/draw/", views.draw, name="draw"),
    path("cycles/<int:pk>/", views.cycle, name="cycle"),
    path("progress/", views.progress, name="progress"),
]
