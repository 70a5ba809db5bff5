"""manage.py api_token create|list|revoke — API tokens for admins, through the same services as the page."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import ApiToken, User
from accounts.selectors import api_token_get, api_token_list, user_by_email
from accounts.services import api_token_create, api_token_days_default, api_token_revoke


class Command(BaseCommand):
    help = (
        "Create, list or revoke API tokens. `create` prints the secret once (only its hash is stored); the "
        "token's user must satisfy the MFA rule (staff, admins and adjudicators need an active TOTP authenticator)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Issue a token for a user and print its secret.")
        create.add_argument("email")
        create.add_argument("--name", required=True)
        create.add_argument("--scope", action="append", dest="scopes", choices=ApiToken.Scope.values,
                            help="Repeat for several scopes (default: reports:read).")
        create.add_argument("--days", type=int, default=None,
                            help=f"Lifetime in days (default: ACCOUNTS_API_TOKEN_DAYS, {api_token_days_default()}).")
        listing = sub.add_parser("list", help="List tokens (all, or one user's).")
        listing.add_argument("email", nargs="?")
        revoke = sub.add_parser("revoke", help="Revoke a token by its id (see `list`).")
        revoke.add_argument("token_id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "create":
            user = self._user(options["email"])
            try:
                token, secret = api_token_create(user=user, name=options["name"],
                                                 scopes=options["scopes"] or [ApiToken.Scope.REPORTS_READ],
                                                 days=options["days"])
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from exc
            self.stdout.write(f"token {token.pk} for {user.email}, scopes {' '.join(token.scopes)}, "
                              f"expires {token.expires_at:%Y-%m-%d %H:%M} UTC")
            self.stdout.write(secret)
        elif action == "list":
            tokens = api_token_list(user=self._user(options["email"]) if options["email"] else None)
            for token in tokens:
                used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
                self.stdout.write(f"{token.pk}\t{token.user.email}\t{token.name}\t{token.prefix}…\t"
                                  f"{' '.join(token.scopes)}\t{token.status}\texpires {token.expires_at:%Y-%m-%d}"
                                  f"\tlast used {used}")
        else:
            found = api_token_get(pk=options["token_id"])
            if found is None:
                raise CommandError(f"no token with id {options['token_id']}")
            api_token_revoke(token=found)
            self.stdout.write(f"token {found.pk} ({found.name}) revoked")

    @staticmethod
    def _user(email: str) -> User:
        user = user_by_email(email=email)
        if user is None:
            raise CommandError(f"no user with the email {email}")
        return user
