"""`config` is also a small app: the operations side of the deployment (health, worker heartbeat, request logs)."""
from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class OperationsConfig(AppConfig):
    name = "config"
    label = "config"
    verbose_name = "Operations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from config.audit_hooks import audit_hooks_connect

        audit_hooks_connect()  # the audit trail hears the apps above it (config/audit_hooks.py)
        from config.personal_data import personal_data_sections_register

        personal_data_sections_register()  # accounts.privacy's export and erasure reach every app


class PolicyAdminConfig(admin_apps.AdminConfig):
    """Django's admin, whose site asks `access.policy` (ADMIN_SITE) who may enter."""

    default = False  # OperationsConfig is this module's app; this one is named in INSTALLED_APPS
    default_site = "config.admin_site.PolicyAdminSite"
