"""Root URL configuration."""
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from access.policy import Action, policy_required
from accounts import views as account_views
from config import audit_views
from config import help as help_views
from config import home as home_views
from evaluations.urls import judge_urls

# A lost database connection answers 503 + Retry-After instead of 500 (config/errors.py).
handler500 = "config.errors.server_error"

urlpatterns = [
    path("", home_views.home, name="home"),
    path("help/", help_views.help_index, name="help"),
    path("help/<str:topic>/", help_views.help_topic, name="help_topic"),
    path("audit/", audit_views.audit_log, name="audit_log"),
    path("audit/export/", audit_views.audit_log_export, name="audit_log_export"),
    # The admin signs in through allauth too, so MFA and the login rate limits apply there as well.
    path("admin/login/", account_views.admin_login, name="admin_login_via_allauth"),
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/", include("config.api_urls")),
    # Swagger UI is drf-spectacular-sidecar's static files (SPECTACULAR_SETTINGS): nothing from the internet. Its
    # inline script and style carry the nonce (templates/drf_spectacular/swagger_ui.html). No Redoc: its bundle
    # always loads a logo from cdn.redoc.ly and needs inline styles and blob: workers, which the policy refuses.
    # Both are for those who may use the API (admins): the description names every report field and endpoint.
    path("api/v1/docs/", policy_required(Action.USE_API)(SpectacularSwaggerView.as_view(url_name="api-schema")),
         name="api-docs"),
    path("evaluations/", include("evaluations.urls")),
    path("judge/", include(judge_urls)),  # evaluations/urls.py (its start/retry views enqueue: above judge/)
    path("accounts/", include("accounts.urls")),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the switcher's POST (templates/base.html)
    path("accounts/", include("allauth.urls")),
    path("scoring/", include("annotations.urls")),
    path("review/", include("casereview.urls")),
    path("calibration/", include("calibration.urls")),
    path("calibrated/", include("calibration.calibrated.urls")),
    path("delphi/", include("delphi.urls")),
]
