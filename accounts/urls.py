from django.urls import path

from . import privacy_views, views

app_name = "accounts"

urlpatterns = [
    path("invitation/<str:token>/", views.invitation_accept, name="invitation_accept"),
    path("profile/", views.profile, name="profile"),
    path("profile/data/", privacy_views.my_data, name="my_data"),
    path("tokens/", views.api_tokens, name="api_tokens"),
    path("inbox/", views.inbox, name="inbox"),
    path("tokens/<int:pk>/revoke/", views.api_token_revoke_view, name="api_token_revoke"),
]
