"""Test settings: fast hashing, in-memory email, immediate tasks unless a test asks otherwise."""
from . import base
from .base import env

globals().update(base.SETTINGS)  # every setting of base.py; this module overrides some

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY", "test-insecure-key-0123456789abcdef0123456789abcdef")
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Off for the tests that are not about it; tests/accounts/test_mfa.py turns it on and proves it is enforced.
ACCOUNTS_MFA_REQUIRED = False
SITE_URL = "http://testserver"
