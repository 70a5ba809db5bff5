from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("invitation/<str:token>/", views.invitation_accept, name="invitation_accept"),
    path("profile/", views.profile, name="profile"),
]
