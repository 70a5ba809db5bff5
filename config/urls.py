"""Root URL configuration."""
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts import views as account_views
from config import home as home_views

# A lost database connection answers 503 + Retry-After instead of 500 (config/errors.py).
handler500 = "config.errors.server_error"
SWAGGER_CDN = "https://cdn.jsdelivr.net"

urlpatterns = [
    path("", home_views.home, name="home"),
    # The admin signs in through allauth too, so MFA and the login rate limits apply there as well.
    path("admin/login/", account_views.admin_login, name="admin_login_via_allauth"),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/", include("config.api_urls")),
    # Swagger UI comes from drf-spectacular's CDN; its inline script and style carry the nonce
    # (templates/drf_spectacular/swagger_ui.html).
    path("api/v1/docs/", csp_update({"script-src": [SWAGGER_CDN], "style-src": [SWAGGER_CDN]})(
        SpectacularSwaggerView.as_view(url_name="api-schema")), name="api-docs"),
    path("evaluations/", include("evaluations.urls")),
    path("judge/", include("evaluations.judge.urls")),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("scoring/", include("annotations.urls")),
    path("review/", include("calibration.casereview.urls")),
    path("calibration/", include("calibration.urls")),
    path("calibrated/", include("calibration.calibrated.urls")),
    path("delphi/", include("calibration.delphi.urls")),
]
