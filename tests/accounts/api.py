"""API tokens for tests: an `Authorization` header for a user, made through the real service."""
from __future__ import annotations

from accounts.models import ApiToken, User
from accounts.services import api_token_create


def token_secret(user: User, *scopes: str) -> str:
    """A fresh token's secret for `user` (default scope: reports:read)."""
    _token, secret = api_token_create(user=user, name="test", scopes=list(scopes or [ApiToken.Scope.REPORTS_READ]))
    return secret


def token_auth(user: User, *scopes: str) -> dict[str, str]:
    """Keyword arguments for Django's test client: `client.get(url, **token_auth(user))`."""
    return {"HTTP_AUTHORIZATION": f"Token {token_secret(user, *scopes)}"}
