"""Settings shared by every environment. Secrets and the database come from the environment."""
import os
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env(name: str, default: str | None = None) -> str | None:
    """Read a setting from the environment."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


SECRET_KEY = env("DJANGO_SECRET_KEY", "")
DEBUG = False
ALLOWED_HOSTS: list[str] = [h for h in (env("DJANGO_ALLOWED_HOSTS", "") or "").split(",") if h]

INSTALLED_APPS = [
    "config.apps.PolicyAdminConfig",  # django.contrib.admin, its site asking access.policy
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI as our own static files (no CDN: the API docs work offline)
    "django_tasks",
    "django_tasks_db",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "accounts",
    "audit",  # the append-only audit trail (issue 33): below evaluations, so every app above records into it
    "evaluations",
    "annotations",
    "evidence",  # the one versioned, hashed snapshot of every computed artefact
    "casereview",
    "calibration",
    "delphi",
    "config",  # operations: worker heartbeat (config/models.py), `manage.py run_worker`
]

MIDDLEWARE = [
    # /healthz first: no host check, session or redirect for a load balancer's probe (config/middleware.py).
    "config.middleware.HealthCheckMiddleware",
    "config.middleware.RequestLogMiddleware",
    # /api/: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is a JSON 413, never Django's HTML 400 page.
    "config.middleware.ApiBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy (django-csp), with a fresh nonce per response for the <style> blocks.
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface language: the set_language cookie, else Accept-Language (docs/languages.md); after the session,
    # before CommonMiddleware. A signed-in user's own choice wins (accounts.middleware.UserLanguageMiddleware).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    # 404 for ids past 64 bits, 400 for NUL characters in the path or query (they would overflow or fail in SQL).
    "config.middleware.BadInputMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserLanguageMiddleware",  # User.language, saved by the switcher (templates/base.html)
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # After authentication and htmx: staff and adjudicators without TOTP go to the MFA set-up page first.
    "accounts.middleware.MfaRequiredMiddleware",
    # Remembers the request for audit rows written by receivers and services; records every attachment answered.
    "audit.middleware.AuditContextMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",  # {{ LANGUAGE_CODE }}, {{ LANGUAGE_BIDI }}, {{ LANGUAGES }}
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",  # {{ CSP_NONCE }}
                "access.policy.can",
                "accounts.context_processors.notifications",  # {{ unread_notifications }} in the navigation  # {{ can.manage_calibration }}, … — what navigation and links offer
                "config.context_processors.worker",  # {{ worker_status.alive }}: templates/includes/worker_notice.html
            ],
        },
    },
]

# SQLite by default (zero set-up); PostgreSQL when DATABASE_URL is set.
DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(env("DJANGO_CONN_MAX_AGE", "0") or 0),
        # A persistent connection is checked (SELECT 1 equivalent) before each request reuses it, so a
        # database restart costs the requests in flight, not every request of every worker afterwards.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the task worker and the web server share the file. Transactions take the
    # write lock when they begin (IMMEDIATE): a deferred one that reads first and writes later cannot wait for
    # the lock — SQLite answers "database is locked" at once — so two saves of one item racing each other
    # (a double Enter, an autosave overtaking a submit) failed; now the second waits its turn and is told 409.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         "transaction_mode": "IMMEDIATE"}
    )

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
# The interface languages (docs/languages.md: adding one). Names in their own language: the switcher shows each
# language as its speakers write it. Catalogues in locale/<ll>/LC_MESSAGES (the .po and its compiled .mo are
# both committed, so serving needs no gettext tools); the glossary docs/glossary.csv fixes the rubric's terms.
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("de", "Deutsch"),
    ("ko", "한국어"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_SAMESITE = "Lax"
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
# Files served at the site's root by WhiteNoise (development, tests and production alike): /favicon.ico, which
# browsers and tools ask for whatever the page links.
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Report downloads (evidence/downloads.py, docs/deployment.md): "" sends a snapshot's stored bytes from
# the application; "x-accel-redirect" (nginx, compose.yaml) or "x-sendfile" (Apache, lighttpd) writes each stored
# file once under DOWNLOADS_ROOT, named by its SHA-256, and lets the web server in front send it, so a download
# holds a gunicorn worker for an access check only. DOWNLOADS_ACCEL_PREFIX is nginx's `internal` location.
DOWNLOADS_OFFLOAD = (env("FAITHBENCH_DOWNLOADS_OFFLOAD", "") or "").strip().lower()
DOWNLOADS_ROOT = Path(env("FAITHBENCH_DOWNLOADS_ROOT", "") or BASE_DIR / "downloads")
DOWNLOADS_ACCEL_PREFIX = env("FAITHBENCH_DOWNLOADS_ACCEL_PREFIX", "/_protected/snapshots/") or "/_protected/snapshots/"

# --- Accounts: django-allauth, email sign-in only, invitation-only sign-up, TOTP for staff ---------------
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "/"
SITE_URL = env("DJANGO_SITE_URL", "http://127.0.0.1:8000")  # absolute links in invitation emails
DEFAULT_FROM_EMAIL = env("DJANGO_DEFAULT_FROM_EMAIL", "FaithBench Calibration <noreply@localhost>")

ACCOUNT_ADAPTER = "calibration.landing.LandingAccountAdapter"
ACCOUNT_FORMS = {"signup": "accounts.forms.InvitedSignupForm"}
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[FaithBench] "
ACCOUNT_PREVENT_ENUMERATION = True
# Sign-in throttling (allauth's rate limits; counters live in the cache, shared by all processes in
# production). Per ACCOUNT: 5 failed sign-ins per 5 minutes for one email address, then it is locked for the
# rest of the window whatever the IP. Per IP: generous, because a room of 40-50 experts behind one NAT (a
# seminar, a conference) signs in from one address within a minute: 200 attempts and 30 failures a minute.
# Both are settings (DJANGO_LOGIN_RATE_LIMIT, DJANGO_LOGIN_FAILED_RATE_LIMIT), in allauth's syntax.
ACCOUNT_RATE_LIMITS = {
    "login": env("DJANGO_LOGIN_RATE_LIMIT", "200/m/ip"),
    "login_failed": env("DJANGO_LOGIN_FAILED_RATE_LIMIT", "30/m/ip,5/5m/key"),
    "reset_password": "20/m/ip,5/m/key",
    "signup": "20/m/ip",
}
# "The IP" is the client's address as the proxy in front of the app saw it. Behind N reverse proxies that
# each append to X-Forwarded-For (nginx, a load balancer), set DJANGO_TRUSTED_PROXY_COUNT=N: otherwise every
# request seems to come from the proxy and all experts share one bucket. 0 (the default) trusts no
# X-Forwarded-For at all (a client could forge it), and uses REMOTE_ADDR.
ALLAUTH_TRUSTED_PROXY_COUNT = int(env("DJANGO_TRUSTED_PROXY_COUNT", "0") or 0)
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_TOTP_ISSUER = "FaithBench Calibration"
# Staff, admins and adjudicators must activate a TOTP authenticator before any other page.
# Only the test settings turn this off (for tests that are not about it).
ACCOUNTS_MFA_REQUIRED = True
ACCOUNTS_INVITATION_DAYS = 14
# Audit rows older than this are removed by `manage.py prune_audit` (which records the prune): docs/data-protection.md.
AUDIT_RETENTION_DAYS = int(env("FAITHBENCH_AUDIT_RETENTION_DAYS", "365") or 365)
# API tokens (accounts.ApiToken): lifetime when created (days), the longest a creator may choose, and how
# often the last-used time is written (at most once per this many seconds, to keep requests cheap).
ACCOUNTS_API_TOKEN_DAYS = int(env("ACCOUNTS_API_TOKEN_DAYS", "90") or 90)
ACCOUNTS_API_TOKEN_MAX_DAYS = int(env("ACCOUNTS_API_TOKEN_MAX_DAYS", "365") or 365)
ACCOUNTS_API_TOKEN_TOUCH_SECONDS = 60

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.api_auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # The one API permission: the policy's action for the user and, with a token, the view's token_scope. No API
    # view sets permission_classes (tests/accounts/test_api_tokens.py walks every API URL for it).
    "DEFAULT_PERMISSION_CLASSES": ["access.policy.ApiPermission"],
    # JSON bodies with a NUL character anywhere are refused (400 naming the field): PostgreSQL's text cannot hold one.
    "DEFAULT_PARSER_CLASSES": ["config.api_parsers.JSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "FaithBench Calibration API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs page are for those who may use the API (access.policy: "api-schema", "api-docs" need
    # USE_API; a token of theirs with any scope reads the schema): experts and visitors get 403, the docs page
    # sends a visitor to sign in.
    "SERVE_PERMISSIONS": ["access.policy.PolicyPermission"],
    # Swagger UI from drf-spectacular-sidecar's static files, not a CDN: /api/v1/docs/ renders without internet
    # access and under the site's Content-Security-Policy. No validator badge (it would load an image from
    # validator.swagger.io).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # Several models have a `status` with choices of their own: each gets a named enum in the schema.
    "ENUM_NAME_OVERRIDES": {
        "JudgeRunStatusEnum": "evaluations.models.JudgeRun.Status",
        "ReportSnapshotStatusEnum": "evidence.models.Snapshot.Status",
        "StudyJudgeRunStatusEnum": "calibration.models.StudyJudgeRun.Status",
    },
}

# Request bodies: form fields (not files) up to Django's default 2.5 MB; files above 2.5 MB stream to a temporary
# file instead of memory; an import page refuses files above IMPORT_MAX_UPLOAD_BYTES with a message (413/400).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
IMPORT_MAX_UPLOAD_BYTES = int(env("IMPORT_MAX_UPLOAD_BYTES", str(50 * 1024 * 1024)) or 0)
# Rating studies: the most ratings one import may bring (the upload page, the API, import_ratings; 0: no limit), and
# how long an uploaded file waits on the server for its check and import (docs/rating-studies.md).
STUDY_MAX_ROWS = int(env("FAITHBENCH_STUDY_MAX_ROWS", "2000000") or 0)
STUDY_UPLOAD_DIR = env("FAITHBENCH_STUDY_UPLOAD_DIR", "")  # shared by the web and worker processes; "": a temp dir
STUDY_UPLOAD_RETENTION_SECONDS = int(env("FAITHBENCH_STUDY_UPLOAD_RETENTION_SECONDS", str(24 * 3600)) or 24 * 3600)

# Content-Security-Policy (django-csp 4). Scripts only from our own origin, or with this response's nonce:
# no inline <script> and no inline event handler (onclick=…, hx-on) can run, so an injected one does
# nothing. Styles likewise: the templates' <style> blocks carry the nonce and no element has a style
# attribute (progress bars use the w-0 … w-100 classes of static/css/widths.css), so 'unsafe-inline' is not
# needed. htmx runs with includeIndicatorStyles=false (it would otherwise inject a <style> without a nonce)
# and without "style" in attributesToSettle (it would copy style attributes with setAttribute, which the
# policy refuses); both in base.html's htmx-config. The browser tests fail on any CSP violation in the console.
# tests/test_csp.py checks the header and that no template has an inline script, handler or style attribute.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# Error reports (the DEBUG page, admin emails) hide the judge's API key and base URL, DATABASE_URL and any
# setting, environment variable or local variable whose name matches KEY|TOKEN|SECRET|PASSWORD|… .
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.errors.SensitiveSettingsFilter"

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# /healthz: the worker's heartbeat thread writes every HEALTH_WORKER_BEAT_SECONDS; older than
# HEALTH_WORKER_MAX_AGE means no worker is alive (503).
HEALTH_WORKER_BEAT_SECONDS = float(env("HEALTH_WORKER_BEAT_SECONDS", "10") or 10)
HEALTH_WORKER_MAX_AGE = float(env("HEALTH_WORKER_MAX_AGE", "60") or 60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "evaluations": {"level": env("FAITHBENCH_LOG_LEVEL", "INFO")},
    },
}

# The FaithBench methodology v1.0, section 15: judge and test-model configuration.
FAITHBENCH = {
    "LLM_BASE_URL": env("FAITHBENCH_LLM_BASE_URL", "https://openrouter.ai/api/v1"),
    "LLM_API_KEY": env("FAITHBENCH_LLM_API_KEY", ""),
    "JUDGE_PRIMARY_MODEL": env("FAITHBENCH_JUDGE_PRIMARY_MODEL", "google/gemini-3-flash-preview"),
    "JUDGE_FALLBACK_MODEL": env("FAITHBENCH_JUDGE_FALLBACK_MODEL", "openai/gpt-4o-mini"),
    "JUDGE_SECONDARY_MODEL": env("FAITHBENCH_JUDGE_SECONDARY_MODEL", ""),
}

# Seconds after a submission (or skip) during which the expert may take it back ("Undo"); the window also
# closes as soon as the expert saves anything on another item (annotations/services.py, annotation_undo).
SCORING_UNDO_SECONDS = int(env("FAITHBENCH_SCORING_UNDO_SECONDS") or "120")

# Test–retest (issue 34): a new cycle re-serves this share of each expert's submitted items to the same expert, blind,
# no sooner than RETEST_MIN_DAYS after the first submission (annotations/retests.py). A cycle may turn it off; a share
# of 0 or over 0.5 is refused with words (the cycle's form and model).
RETEST_SHARE = float(env("FAITHBENCH_RETEST_SHARE") or "0.05")
RETEST_MIN_DAYS = int(env("FAITHBENCH_RETEST_MIN_DAYS") or "7")

# `manage.py notify_due` reminds panelists of Delphi rounds open longer than this that they have not answered.
DELPHI_REMINDER_DAYS = float(env("FAITHBENCH_DELPHI_REMINDER_DAYS") or "3")

# Thin evidence (evaluations/judge/guardrails.py): below this many scored cases a model is not ranked, a run is a trial, an
# interval is words and an effect size is not shown. Default 10: methodology §5.1.1's minimum per cell.
FAITHBENCH_MIN_CASES_PER_MODEL = int(env("FAITHBENCH_MIN_CASES_PER_MODEL") or "10")


def settings_of(namespace: dict[str, object]) -> dict[str, object]:
    """The settings (UPPER_CASE names) of a settings module's namespace, for an overlay to start from."""
    return {name: value for name, value in namespace.items() if name.isupper()}


SETTINGS = settings_of(globals())  # what dev.py, test.py and prod.py start from, by name (no `import *`)
