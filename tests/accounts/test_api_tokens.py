"""API tokens: hashed, scoped, expiring, revocable, last use recorded cheaply, and never a way around MFA."""
from __future__ import annotations

import hashlib
from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from rest_framework.views import APIView

from access.policy import ApiPermission, view_token_scope
from accounts.models import ApiToken, User
from accounts.services import api_token_create, api_token_revoke
from accounts.totp import totp_activate, totp_secret_new
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db

GOLD = "/api/v1/gold-labels/"


def auth(secret: str, keyword: str = "Token") -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"{keyword} {secret}"}


@pytest.fixture
def admin() -> User:
    return person(User.Role.ADMIN)


def test_only_a_hash_of_the_secret_is_stored_and_the_token_works(admin: User) -> None:
    token, secret = api_token_create(user=admin, name="export", scopes=["reports:read"])
    token.refresh_from_db()
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    stored = [str(value) for value in ApiToken.objects.values_list(*[f.attname for f in ApiToken._meta.fields]).get()]
    assert secret not in stored and secret.startswith("fbt_") and len(secret) > 40
    assert secret.startswith(token.prefix) and len(token.prefix) < 12
    client = Client()
    assert client.get(GOLD, **auth(secret)).status_code == 200
    assert client.get(GOLD, **auth(secret, "Bearer")).status_code == 200
    assert client.get(GOLD, **auth(secret + "x")).status_code == 401
    assert client.get(GOLD, **auth("fbt_" + "A" * 500)).status_code == 401
    retired = client.get(GOLD, **auth("9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"))  # an old authtoken key
    assert retired.status_code == 401 and "/accounts/tokens/" in retired.json()["detail"]


def test_tokens_expire_after_the_configured_days_by_default(admin: User, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ACCOUNTS_API_TOKEN_DAYS = 90
    token, _ = api_token_create(user=admin, name="t", scopes=["reports:read"])
    assert abs(token.expires_at - (timezone.now() + timedelta(days=90))) < timedelta(minutes=1)
    with pytest.raises(ValidationError) as refused:
        api_token_create(user=admin, name="t", scopes=["reports:read"], days=settings.ACCOUNTS_API_TOKEN_MAX_DAYS + 1)
    assert "days" in refused.value.message_dict


def test_an_expired_token_is_refused_with_a_clear_message(admin: User) -> None:
    token, secret = api_token_create(user=admin, name="old", scopes=["reports:read"])
    now = timezone.now()
    ApiToken.objects.filter(pk=token.pk).update(created_at=now - timedelta(days=100), expires_at=now - timedelta(seconds=1))
    response = Client().get(GOLD, **auth(secret))
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    assert ApiToken.objects.active().filter(pk=token.pk).count() == 0


def test_a_revoked_token_is_refused(admin: User) -> None:
    token, secret = api_token_create(user=admin, name="t", scopes=["reports:read"])
    client = Client()
    assert client.get(GOLD, **auth(secret)).status_code == 200
    api_token_revoke(token=token)
    response = client.get(GOLD, **auth(secret))
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
    first = ApiToken.objects.get(pk=token.pk).revoked_at
    api_token_revoke(token=token)  # idempotent: the first revocation time stays
    assert ApiToken.objects.get(pk=token.pk).revoked_at == first


def test_a_token_needs_the_scope_of_the_endpoint_and_method(admin: User) -> None:
    client = Client()
    _, write_only = api_token_create(user=admin, name="w", scopes=["data:write"])
    denied = client.get(GOLD, **auth(write_only))
    assert denied.status_code == 403 and "reports:read" in denied.json()["detail"]
    assert client.get(reverse("api-leaderboard"), **auth(write_only)).status_code == 403
    _, read_only = api_token_create(user=admin, name="r", scopes=["reports:read"])
    versions = reverse("api-cycle-report-versions", args=[1])
    # Queuing a report version is a write: a read-only token may list versions but not request one.
    posted = client.post(versions, {"seed": 1}, content_type="application/json", **auth(read_only))
    assert posted.status_code == 403 and "data:write" in posted.json()["detail"]
    assert client.get(versions, **auth(read_only)).status_code == 404  # allowed through; cycle 1 does not exist


def test_scopes_do_not_limit_a_signed_in_session(admin: User) -> None:
    client = Client()
    client.force_login(admin)
    assert client.get(GOLD).status_code == 200


def test_a_token_does_not_raise_its_owner_above_their_role() -> None:
    _, secret = api_token_create(user=person(User.Role.EXPERT), name="t", scopes=["reports:read"])
    assert Client().get(GOLD, **auth(secret)).status_code == 403


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
@pytest.mark.parametrize("role", [User.Role.ADMIN, User.Role.ADJUDICATOR])
def test_staff_without_totp_cannot_create_tokens(role: str) -> None:
    user = person(role)
    with pytest.raises(ValidationError) as refused:
        api_token_create(user=user, name="t", scopes=["reports:read"])
    assert "TOTP" in " ".join(refused.value.message_dict["user"])
    client = Client()
    client.force_login(user)
    page = client.post(reverse("accounts:api_tokens"), {"name": "t", "scopes": ["reports:read"], "days": "30"})
    assert page.status_code == 400 and ApiToken.objects.count() == 0
    assert "activate an authenticator" in page.content.decode()
    with pytest.raises(CommandError, match="TOTP"):
        call_command("api_token", "create", user.email, "--name", "t", stdout=StringIO())


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
def test_a_staff_token_stops_working_when_its_owner_has_no_totp(admin: User) -> None:
    totp_activate(user=admin, secret=totp_secret_new())
    _, secret = api_token_create(user=admin, name="t", scopes=["reports:read"])
    client = Client()
    assert client.get(GOLD, **auth(secret)).status_code == 200
    admin.authenticator_set.all().delete()  # the authenticator was removed (lost phone, reset by another admin)
    refused = client.get(GOLD, **auth(secret))
    assert refused.status_code == 403 and "TOTP" in refused.json()["detail"]


@override_settings(ACCOUNTS_MFA_REQUIRED=True)
def test_experts_need_no_totp_for_a_token() -> None:
    expert = person(User.Role.EXPERT)
    token, secret = api_token_create(user=expert, name="t", scopes=["reports:read"])
    assert token.pk and Client().get(GOLD, **auth(secret)).status_code == 403  # authenticated; the endpoint is staff-only


def test_last_use_is_written_at_most_once_a_minute(admin: User) -> None:
    token, secret = api_token_create(user=admin, name="t", scopes=["reports:read"])
    assert token.last_used_at is None
    client = Client()
    client.get(GOLD, **auth(secret))
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=10)
    with CaptureQueriesContext(connection) as queries:
        client.get(GOLD, **auth(secret))
    assert not [q for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(seconds=61))
    client.get(GOLD, **auth(secret))
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first


def test_inactive_users_tokens_are_refused(admin: User) -> None:
    _, secret = api_token_create(user=admin, name="t", scopes=["reports:read"])
    User.objects.filter(pk=admin.pk).update(is_active=False)
    assert Client().get(GOLD, **auth(secret)).status_code == 401


def test_the_account_page_shows_the_secret_once_lists_and_revokes(admin: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin)
    page = client.get(reverse("accounts:api_tokens"))
    assert page.status_code == 200 and "No tokens yet" in page.content.decode()
    csrf = page.cookies["csrftoken"].value
    no_csrf = client.post(reverse("accounts:api_tokens"), {"name": "n", "scopes": ["reports:read"], "days": "30"})
    assert no_csrf.status_code == 403 and ApiToken.objects.count() == 0
    created = client.post(reverse("accounts:api_tokens"),
                          {"name": "nightly", "scopes": ["reports:read", "judge:run"], "days": "30",
                           "csrfmiddlewaretoken": csrf})
    assert created.status_code == 200
    token = ApiToken.objects.get()
    assert token.scopes == ["reports:read", "judge:run"]
    assert abs(token.expires_at - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    body = created.content.decode()
    secret = body.split('data-testid="token-secret">', 1)[1].split("<", 1)[0]
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    listing = client.get(reverse("accounts:api_tokens")).content.decode()
    assert "nightly" in listing and token.prefix in listing and secret not in listing and "<script>" not in listing
    bad = client.post(reverse("accounts:api_tokens"), {"name": "", "scopes": [], "days": "0",
                                                       "csrfmiddlewaretoken": csrf})
    assert bad.status_code == 400 and ApiToken.objects.count() == 1
    revoked = client.post(reverse("accounts:api_token_revoke", args=[token.pk]), {"csrfmiddlewaretoken": csrf})
    assert revoked.status_code == 302 and ApiToken.objects.get().revoked_at is not None
    assert Client().get(GOLD, **auth(secret)).status_code == 401


def test_nobody_revokes_another_persons_token(admin: User) -> None:
    token, _ = api_token_create(user=admin, name="t", scopes=["reports:read"])
    client = Client()
    client.force_login(person(User.Role.ADMIN))
    assert client.post(reverse("accounts:api_token_revoke", args=[token.pk])).status_code == 404
    assert ApiToken.objects.get().revoked_at is None


def test_the_management_command_creates_lists_and_revokes(admin: User) -> None:
    out = StringIO()
    call_command("api_token", "create", admin.email, "--name", "ci", "--scope", "reports:read", "--days", "7",
                 stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get()
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest() and token.scopes == ["reports:read"]
    assert Client().get(GOLD, **auth(secret)).status_code == 200
    listing = StringIO()
    call_command("api_token", "list", stdout=listing)
    assert "ci" in listing.getvalue() and secret not in listing.getvalue() and "active" in listing.getvalue()
    call_command("api_token", "revoke", str(token.pk), stdout=StringIO())
    assert Client().get(GOLD, **auth(secret)).status_code == 401
    with pytest.raises(CommandError):
        call_command("api_token", "create", "nobody@example.org", "--name", "x", stdout=StringIO())


def _api_views(patterns: list, prefix: str = "") -> list[tuple[str, type]]:  # type: ignore[type-arg]
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += _api_views(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            view_class = getattr(pattern.callback, "cls", None)
            if view_class and issubclass(view_class, APIView) and (prefix + str(pattern.pattern)).startswith("api/v1/"):
                found.append((prefix + str(pattern.pattern), pattern.callback))
    return found


def test_every_api_endpoint_checks_a_token_scope_for_each_of_its_methods() -> None:
    views = _api_views(get_resolver().url_patterns)
    checked = 0
    for route, callback in views:
        view_class = callback.cls
        if view_class.__module__.startswith("drf_spectacular"):
            continue  # the schema and its docs page: public description, no data
        permissions = callback.view_initkwargs.get("permission_classes", view_class.permission_classes)
        assert list(permissions) == [ApiPermission], route  # the settings' one permission: no view sets its own
        instance = view_class(**callback.view_initkwargs)
        for method in ("get", "post", "put", "patch", "delete"):
            if hasattr(view_class, method):
                assert view_token_scope(instance, method.upper()) in ApiToken.Scope.values, (route, method)
                checked += 1
    assert checked >= 5


def test_the_old_plain_text_token_table_is_gone() -> None:
    assert "authtoken_token" not in connection.introspection.table_names()
