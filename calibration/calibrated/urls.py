from django.urls import path

from . import views

app_name = "calibrated"

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/<int:run_id>/", views.board, name="board"),
    path("runs/<int:run_id>/versions/", views.compute, name="compute"),
    path("runs/<int:run_id>/versions/<int:version>/progress/", views.progress, name="progress"),
    path("runs/<int:run_id>/leaderboard.<str:fmt>", views.download, name="export"),
    path("runs/<int:run_id>/variance-budget/", views.budget, name="budget"),
    path("runs/<int:run_id>/variance-budget.csv", views.budget_export, name="budget_export"),
    path("history/", views.history, name="history"),
    path("history.csv", views.history_export, name="history_export"),
]
