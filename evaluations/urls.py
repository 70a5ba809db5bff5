from django.urls import path

from . import views

app_name = "evaluations"

urlpatterns: list = [
    path("", views.home, name="index"),
]
