from django.urls import path

from . import views

app_name = "calibrated"

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/<int:run_id>/", views.board, name="board"),
    path("runs/<int:run_id>/versions/", views.compute, name="compute"),
    path("runs/<int:run_id>/versions/<int:version>/progress/", views.progress, name="progress"),
    path("runs/<int:run_id>/leaderboard.<str:fmt>", views.download, name="export"),
]
