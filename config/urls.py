"""Root URL configuration."""
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts import views as account_views
from evaluations import views as evaluation_views

urlpatterns = [
    path("", evaluation_views.home, name="home"),
    # The admin signs in through allauth too, so MFA and the login rate limits apply there as well.
    path("admin/login/", account_views.admin_login, name="admin_login_via_allauth"),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/", include("config.api_urls")),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("evaluations/", include("evaluations.urls")),
    path("judge/", include("evaluations.judge.urls")),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("scoring/", include("annotations.urls")),
    path("calibration/", include("calibration.urls")),
    path("delphi/", include("calibration.delphi.urls")),
]
