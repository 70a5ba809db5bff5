"""manage.py demo_totp EMAIL — the current two-factor code of a demo account (development only)."""
import time

from allauth.mfa import app_settings
from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value
from allauth.mfa.utils import decrypt
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

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
        authenticator = Authenticator.objects.filter(user__email=email, type=Authenticator.Type.TOTP).first()
        if authenticator is None:
            raise CommandError(f"{email} has no TOTP authenticator; run `manage.py load_demo` first.")
        secret = decrypt(authenticator.data["secret"])
        now = time.time()
        counter = int(now) // app_settings.TOTP_PERIOD
        left = app_settings.TOTP_PERIOD - int(now) % app_settings.TOTP_PERIOD
        self.stdout.write(f"{format_hotp_value(hotp_value(secret, counter))}  (valid for {left} s more)")
