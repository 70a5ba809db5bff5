"""Error reports (the DEBUG page, admin error emails) never show the judge's key or base URL, DATABASE_URL or
any setting, environment variable or local variable named like a secret."""
from __future__ import annotations

import sys
from secrets import token_hex

import pytest
from django.test import RequestFactory, override_settings
from django.views.debug import (
    ExceptionReporter,
    SafeExceptionReporterFilter,
    get_default_exception_reporter_filter,
)

from config.errors import SensitiveSettingsFilter

# Made at run time: the report shows this file's source lines around each frame, and they must not count.
API_KEY = "sk-or-v1-" + token_hex(16)
BASE_URL = f"https://{token_hex(6)}.judge-gateway.example/v1"
DB_PASSWORD = token_hex(8)
DB_URL = f"postgres://calibration:{DB_PASSWORD}@db.internal.example:5432/faithbench"
TOKEN = token_hex(10)
APP_SECRET = token_hex(10)
JUDGE = {"LLM_BASE_URL": BASE_URL, "LLM_API_KEY": API_KEY, "JUDGE_PRIMARY_MODEL": "google/gemini-3-flash-preview",
         "JUDGE_FALLBACK_MODEL": "openai/gpt-4o-mini", "JUDGE_SECONDARY_MODEL": ""}
SECRETS = [API_KEY, BASE_URL, DB_URL, DB_PASSWORD, TOKEN, APP_SECRET]


def judge_call_fails(api_key: str, base_url: str) -> None:
    auth_header = f"Bearer {api_key}"  # noqa: F841 - a local the report would show
    raise RuntimeError("the judge did not answer")


def report(*, django_filter: bool = False) -> tuple[str, str]:
    request = RequestFactory().get(
        "/scoring/", DATABASE_URL=DB_URL, FAITHBENCH_LLM_API_KEY=API_KEY, FAITHBENCH_LLM_BASE_URL=BASE_URL,
        GITHUB_TOKEN=TOKEN, APP_SECRET=APP_SECRET,
    )
    if django_filter:
        request.exception_reporter_filter = SafeExceptionReporterFilter()
    try:
        judge_call_fails(API_KEY, BASE_URL)
    except RuntimeError:
        reporter = ExceptionReporter(request, *sys.exc_info())
    return reporter.get_traceback_html(), reporter.get_traceback_text()


@pytest.mark.parametrize("debug", [True, False])
def test_the_error_report_hides_judge_settings_database_url_and_secrets(debug: bool) -> None:
    with override_settings(DEBUG=debug, FAITHBENCH=JUDGE, DATABASE_URL=DB_URL, SOME_API_TOKEN=TOKEN):
        assert isinstance(get_default_exception_reporter_filter(), SensitiveSettingsFilter)
        html, text = report()
    for body in (html, text):
        leaked = [secret for secret in SECRETS if secret in body]
        assert not leaked, leaked
    assert "the judge did not answer" in html and "judge_call_fails" in html  # still a useful report
    assert "FAITHBENCH" in html and "DATABASE_URL" in html and "********" in html  # named, value hidden


def test_django_s_own_filter_would_have_shown_them() -> None:
    """The reason for the subclass: the base URL, DATABASE_URL and the judge's locals leak through Django's filter."""
    with override_settings(DEBUG=True, FAITHBENCH=JUDGE, DATABASE_URL=DB_URL):
        html, _ = report(django_filter=True)
    assert BASE_URL in html and DB_URL in html and API_KEY in html
