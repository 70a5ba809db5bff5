"""manage.py demo_totp EMAIL — the current two-factor code of a demo account (development only)."""
from allauth.mfa.models import Authenticator
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from accounts.totp import totp_current_code

DEMO_DOMAIN = "@faithbench.test"


class Command(BaseCommand):
    help = (
        "Print the current TOTP code of a demo account (…@faithbench.test), so the local demo can be tried "
        "without an authenticator app. Refuses to run unless DEBUG is on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")

    def handle(self, *args, **options) -> None:
        if not settings.DEBUG:
            raise CommandError("demo_totp only runs with DEBUG on (the development settings).")
        email = options["email"].strip().lower()
        if not email.endswith(DEMO_DOMAIN):
            raise CommandError(f"demo_totp only serves demo accounts ending in {DEMO_DOMAIN}.")
        user = User.objects.filter(email=email).first()
        try:
            code, left = totp_current_code(user=user) if user else (None, 0)
        except Authenticator.DoesNotExist:
            code = None
        if code is None:
            raise CommandError(f"{email} has no TOTP authenticator; run `manage.py load_demo` first.")
        self.stdout.write(f"{code}  (valid for {left} s more)")
