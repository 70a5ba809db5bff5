from django.urls import path

from . import views

app_name = "review"

# An expert's reviews and audits are addressed by opaque public ids; leads' pages check the panel they manage.
urlpatterns = [
    path("", views.queue, name="queue"),
    path("r/<str:public_id>/", views.case, name="case"),
    path("theobert/a/<str:public_id>/", views.audit, name="audit"),
    path("cycles/", views.cycles, name="cycles"),
    path("cycles/<int:pk>/", views.cycle, name="cycle"),
    path("cycles/<int:pk>/report/", views.cycle_report, name="cycle_report"),
    path("flags/<int:pk>/", views.flag, name="flag"),
    path("cases/<int:pk>/history/", views.case_history, name="case_history"),
    path("theobert/", views.theobert, name="theobert"),
    path("difficulty/", views.difficulty, name="difficulty"),
]
