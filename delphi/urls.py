"""Delphi studies, rounds and allocations (mounted at /delphi/)."""
from django.urls import path

from . import views

app_name = "delphi"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create, name="create"),
    path("<int:pk>/", views.study, name="study"),
    path("<int:pk>/respond/", views.respond, name="respond"),
    path("<int:pk>/rounds/<int:number>/close/", views.round_close, name="round_close"),
    path("<int:pk>/close/", views.study_close, name="study_close"),
    path("<int:pk>/approve/", views.approve, name="approve"),
    path("<int:pk>/rescore/", views.rescore, name="rescore"),
    path("<int:pk>/report.json", views.report_json, name="report_json"),
]
