"""Benchmark: what an API token costs per request — time and SQL queries — against a signed-in session.

Usage:
    .venv/bin/python benchmarks/api_tokens.py               # throwaway SQLite file, 300 timed requests each
    .venv/bin/python benchmarks/api_tokens.py --repeat 1000

A fresh SQLite database (migrated), an admin with an active TOTP authenticator and the MFA rule on (as in
production), one token with `reports:read`. `GET /api/v1/gold-labels/` (an empty list: the view's own work is
one query) is requested `--repeat` times with the token and with a session, through Django's test client.
Printed: median and p95 milliseconds, SQL queries of one request, and how many UPDATEs of the token's
last-used time the whole run wrote (goal: at most one per started minute — `ACCOUNTS_API_TOKEN_TOUCH_SECONDS`).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="fb-bench-tokens-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/db.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()
    settings.ACCOUNTS_MFA_REQUIRED = True
    call_command("migrate", verbosity=0)
    from accounts.models import User
    from accounts.services import api_token_create, user_create
    from accounts.totp import totp_activate, totp_secret_new

    admin = user_create(email="bench-admin@example.org", password=None, role=User.Role.ADMIN, is_superuser=True)
    totp_activate(user=admin, secret=totp_secret_new())
    _token, secret = api_token_create(user=admin, name="bench", scopes=["reports:read"])
    url = "/api/v1/gold-labels/"

    token_client = Client(HTTP_AUTHORIZATION=f"Token {secret}")
    session_client = Client()
    session_client.force_login(admin)
    rows = []
    for label, client in (("token", token_client), ("session", session_client)):
        assert client.get(url).status_code == 200  # warm-up (and the token's first last-used write)
        with CaptureQueriesContext(connection) as one:
            client.get(url)
        timings = []
        with CaptureQueriesContext(connection) as run:
            started = time.perf_counter()
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                response = client.get(url)
                timings.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200
            minutes = (time.perf_counter() - started) / 60
        updates = sum(1 for q in run.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE"))
        timings.sort()
        rows.append((label, statistics.median(timings), timings[int(len(timings) * 0.95) - 1], len(one), updates,
                     minutes))
    print(f"GET {url} × {args.repeat}, SQLite, MFA on (admin with TOTP)")
    print(f"{'auth':<8} {'median ms':>10} {'p95 ms':>8} {'queries':>8} {'UPDATEs in run':>15} {'run minutes':>12}")
    for label, median, p95, queries, updates, minutes in rows:
        print(f"{label:<8} {median:>10.2f} {p95:>8.2f} {queries:>8} {updates:>15} {minutes:>12.2f}")


if __name__ == "__main__":
    main()
