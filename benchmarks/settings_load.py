"""Settings for benchmarks/report_load.py only: production settings served over plain HTTP on 127.0.0.1.

Everything of `config.settings.prod` (DEBUG off, PostgreSQL, the database cache, its middleware), except
what a local HTTP benchmark cannot use: the HTTPS redirect, HSTS and secure-only cookies (the benchmark's
clients speak plain HTTP), the TOTP requirement for staff (the admin who downloads is signed in by a
server-side session) and the manifest static storage (no `collectstatic` for a throwaway run).
"""
from config.settings import prod
from config.settings.base import settings_of

globals().update(settings_of(vars(prod)))  # every production setting, by name; the benchmark overrides some

SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
ACCOUNTS_MFA_REQUIRED = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
