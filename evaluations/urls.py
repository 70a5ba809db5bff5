from django.urls import path

from . import views
from .judge import views as judge

app_name = "evaluations"

urlpatterns: list = [
    path("", views.home, name="index"),
]

# The judge pages, mounted at /judge/ (admins only) in their own namespace.
judge_urlpatterns: list = [
    path("runs/", judge.run_list, name="run_list"),
    path("runs/new/", views.run_start, name="run_start"),
    path("runs/<int:pk>/", judge.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", judge.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/resume/", views.run_resume, name="run_resume"),
    path("runs/<int:pk>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:pk>/repeat/", views.run_repeat, name="run_repeat"),
    path("leaderboard/", judge.leaderboard, name="leaderboard"),
    path("conditions/", judge.conditions, name="conditions"),
    path("conditions/<int:run_id>/conditions.csv", judge.conditions_export, name="conditions_export"),
]
judge_urls = (judge_urlpatterns, "judge")
