"""Local development: DEBUG on, console email, an insecure key that is only ever used locally."""
from . import base
from .base import env

globals().update(base.SETTINGS)  # every setting of base.py; this module overrides some

DEBUG = True
SECRET_KEY = env("DJANGO_SECRET_KEY", "dev-insecure-key-only-for-local-use-0123456789abcdef")
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
