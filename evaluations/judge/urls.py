"""Judge pipeline pages, mounted at /judge/ (staff only)."""
from django.urls import path

from . import views

app_name = "judge"

urlpatterns: list = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
