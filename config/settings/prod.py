"""Production: every secret from the environment, HTTPS everywhere, PostgreSQL via DATABASE_URL."""
from django.core.exceptions import ImproperlyConfigured

from . import base
from .base import env, env_bool

globals().update(base.SETTINGS)  # every setting of base.py; this module overrides some

DEBUG = False
# Persistent connections (health-checked before reuse, see base.py): 60 s unless DJANGO_CONN_MAX_AGE says otherwise.
DATABASES = {"default": {**base.DATABASES["default"],
                         "CONN_MAX_AGE": int(env("DJANGO_CONN_MAX_AGE", "60") or 0)}}
SECRET_KEY = env("DJANGO_SECRET_KEY", "") or ""
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a random string of at least 50 characters.")
if not base.ALLOWED_HOSTS:
    raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must list the host names this site serves.")

SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(env("DJANGO_HSTS_SECONDS", "31536000") or 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = env("DJANGO_EMAIL_HOST", "localhost")
EMAIL_PORT = int(env("DJANGO_EMAIL_PORT", "587") or 587)
EMAIL_HOST_USER = env("DJANGO_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env("DJANGO_EMAIL_HOST_PASSWORD", "")  # a secret: from the environment only
EMAIL_USE_TLS = str(env("DJANGO_EMAIL_USE_TLS", "true")).lower() in {"1", "true", "yes"}
EMAIL_TIMEOUT = 10  # seconds: a slow mail server must not hold a web worker
DEFAULT_FROM_EMAIL = env("DJANGO_DEFAULT_FROM_EMAIL", "noreply@localhost")

# allauth keeps its login rate-limit counters in the cache, so every process must share one:
# the database cache by default (run `manage.py createcachetable` once after migrating).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": env("DJANGO_CACHE_TABLE", "faithbench_cache"),
    }
}

# Logs: JSON lines on stdout (config/logging.py); one line per request from RequestLogMiddleware with its id,
# user id, path, status and duration. FAITHBENCH_REQUEST_LOG=0 turns the request lines off.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "config.logging.JsonFormatter"}},
    "handlers": {"stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "json"}},
    "root": {"handlers": ["stdout"], "level": "WARNING"},
    "loggers": {
        "django.request": {"level": "ERROR"},
        "evaluations": {"level": env("FAITHBENCH_LOG_LEVEL", "INFO")},
        "faithbench": {"level": "INFO" if env_bool("FAITHBENCH_REQUEST_LOG", True) else "WARNING"},
        "django_tasks": {"level": "INFO"},
        "django_tasks_db": {"level": "INFO"},
    },
}
