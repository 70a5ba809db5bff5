"""API tokens in DRF: the authentication class (hashed lookup, expiry, revocation, MFA asked of access.policy).

Clients send `Authorization: Token <secret>` (DRF's keyword, kept for existing clients) or `Bearer <secret>`.
Views state the scope a token needs in `token_scope` (one scope for every method, or a dict by method); the API's
one permission (`access.policy.ApiPermission`, the settings' default) checks it. A request signed in by session is
not limited by scopes: the web's own rules apply.
"""
from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from access.policy import mfa_satisfied

from .models import ApiToken, User, api_token_hash
from .services import API_TOKEN_PREFIX, api_token_touch

KEYWORDS = (b"token", b"bearer")
MAX_SECRET_LENGTH = 200


class ApiTokenAuthentication(BaseAuthentication):
    """Authenticate by an `ApiToken`: unknown, revoked or expired → 401; MFA not satisfied → 403."""

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2 or len(parts[1]) > MAX_SECRET_LENGTH:
            raise exceptions.AuthenticationFailed("Invalid token header: send 'Token <secret>'.")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token.") from exc
        token = ApiToken.objects.select_related("user").filter(key_hash=api_token_hash(secret)).first()
        if token is None:
            if not secret.startswith(API_TOKEN_PREFIX):
                raise exceptions.AuthenticationFailed(
                    "Invalid token. Tokens made before scoped tokens were retired: create one at /accounts/tokens/.")
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This token was revoked.")
        if token.status == ApiToken.Status.EXPIRED:
            raise exceptions.AuthenticationFailed("This token has expired: create a new one on your account page.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("The token's user is inactive.")
        if not mfa_satisfied(token.user):
            # The owner can no longer use the web either (they must set up TOTP first); nor may the token.
            raise exceptions.PermissionDenied(
                "API access refused: staff, admins and adjudicators need an active TOTP authenticator. "
                "Activate one under /accounts/2fa/ and the token works again.")
        api_token_touch(token=token)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return "Token"


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema (drf-spectacular) describes the token: an `Authorization: Token <secret>` header."""

    target_class = "accounts.api_auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <secret>`: create a token on your account page (/accounts/tokens/)."}
