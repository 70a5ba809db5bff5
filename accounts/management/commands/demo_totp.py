"""manage.py demo_totp EMAIL — the two-factor code of a demo account (development only), never one already used.

allauth accepts each code once: a code that signed someone in is refused the second time within its 30-second window
("Incorrect code"). allauth keeps its record of used codes in the cache, which in development is each process's own
memory; the authenticator's `last_used_at` (written by allauth's sign-in, in the database) is what this command can
see. When the account signed in with a code of the current window, the command says so on stderr and waits for the
next window; it also waits when the current code has less than `MIN_VALID_SECONDS` left (too little to type it).
"""
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.selectors import totp_authenticator_get, user_by_email
from accounts.totp import totp_current_code, totp_period

DEMO_DOMAIN = "@faithbench.test"
MIN_VALID_SECONDS = 3

# The clock and the wait, as module attributes so that tests can drive them.
clock = time.time
sleep = time.sleep


class Command(BaseCommand):
    help = (
        "Print the current TOTP code of a demo account (…@faithbench.test), so the local demo can be tried "
        "without an authenticator app; waits for the next code when the current one was already used to sign in. "
        "Refuses to run unless DEBUG is on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")

    def handle(self, *args, **options) -> None:
        if not settings.DEBUG:
            raise CommandError("demo_totp only runs with DEBUG on (the development settings).")
        email = options["email"].strip().lower()
        if not email.endswith(DEMO_DOMAIN):
            raise CommandError(f"demo_totp only serves demo accounts ending in {DEMO_DOMAIN}.")
        user = user_by_email(email=email)
        authenticator = totp_authenticator_get(user=user) if user else None
        if user is None or authenticator is None:
            raise CommandError(f"{email} has no TOTP authenticator; run `manage.py load_demo` first.")
        period = totp_period()
        now = clock()
        window = int(now) // period
        left = period - int(now) % period
        used = authenticator.last_used_at
        reason = ""
        if used is not None and int(used.timestamp()) // period >= window:
            reason = (f"the current code of {email} was already used to sign in at {used:%H:%M:%S} UTC "
                      "(each code works once)")
        elif left < MIN_VALID_SECONDS:
            reason = f"the current code expires in {left} s"
        if reason:
            self.stderr.write(f"{reason}; waiting {left} s for the next code…")
            sys.stderr.flush()
            sleep(left + 0.2)  # just past the window's start
            now = clock()
        code, left = totp_current_code(user=user, now=now)
        self.stdout.write(f"{code}  (valid for {left} s more)")
