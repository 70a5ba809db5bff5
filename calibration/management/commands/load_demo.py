"""manage.py load_demo — the demo data set, idempotent, with the logins printed at the end.

It creates a superuser and experts with passwords printed in the README, so it refuses to run unless DEBUG is
on or the operator says `--i-know-this-is-not-production` (a throwaway benchmark database, a staging demo).
"""
import logging
from typing import Any

from django.conf import settings
from django.core import mail
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from calibration.calibrated.demo import demo_calibrated_snapshot_create
from calibration.demo import (
    FEATURED_EXPERT,
    demo_bias_checks_create,
    demo_languages_create,
    demo_panel_work_create,
    demo_report_snapshot_create,
)
from casereview.demo import demo_validity_create
from evaluations.demo import demo_benchmark_load, demo_conditions_create
from evaluations.judge.demo import judge_demo_run


class Command(BaseCommand):
    help = (
        "Load the demo: traditions, rubric v1.0, test cases, models, responses, TheoBERT cases; an offline judge "
        "run against the built-in fake endpoint; experts, panels, a calibration cycle with scores and gold "
        "decisions; Delphi studies. Safe to run again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-judge", action="store_true", help="Skip the offline judge run.")
        parser.add_argument(
            "--i-know-this-is-not-production", action="store_true", dest="not_production",
            help="Load the demo although DEBUG is off (it creates a superuser with a published password).",
        )

    def handle(self, *args, **options) -> None:
        if not settings.DEBUG and not options["not_production"]:
            raise CommandError(
                "load_demo creates a superuser and experts with published passwords, and DEBUG is off: this looks "
                "like production. Nothing was loaded. On a throwaway database, add --i-know-this-is-not-production."
            )
        with override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"):
            self._load(options)

    def _load(self, options: dict[str, Any]) -> None:
        """The demo, its notification e-mails kept in memory: the console shows how many, not 32 full bodies."""
        sent_before = len(getattr(mail, "outbox", []))
        importing = logging.getLogger("evaluations.importing.services")
        level = importing.level
        importing.setLevel(logging.WARNING)  # its "imported …" line would repeat the summary printed below
        try:
            reports = demo_benchmark_load()  # one transaction (the service's)
        finally:
            importing.setLevel(level)
        for report in reports:
            self.stdout.write(f"imported {report}")
        if not options["no_judge"]:
            # The judge pipeline writes from its own thread, so it runs outside the load's transaction.
            run = judge_demo_run()
            self.stdout.write(f"judge run #{run.pk}: {run.scored_items} scored, {run.failed_items} failed, "
                              f"{run.filtered_items} filtered ({run.primary_model}, offline fake endpoint)")
        logins, scored, two_factor = demo_panel_work_create()
        if scored:
            self.stdout.write(f"demo experts finished {scored} assignments; {FEATURED_EXPERT} has a fresh queue")
        if not options["no_judge"]:
            for check in demo_bias_checks_create():
                self.stdout.write(f"bias check #{check.pk}: {check.get_kind_display()} — "
                                  f"{'flagged' if check.flagged else 'passed'} on {check.n} "
                                  f"{'pairs' if check.kind == 'position' else 'responses'}")
        for line in demo_validity_create():
            self.stdout.write(line)
        snapshot = demo_report_snapshot_create()
        if snapshot is not None:
            self.stdout.write(f"IRR report of the demo cycle: version {snapshot.version} ({snapshot.status}), "
                              f"input hash {snapshot.input_hash[:16]}…")
        calibrated = demo_calibrated_snapshot_create()
        if calibrated is not None:
            shifts = len((calibrated.payload or {}).get("statements", []))
            self.stdout.write(f"calibrated leaderboard of judge run #{calibrated.judge_run_id}: version "
                              f"{calibrated.version} ({calibrated.status}), {shifts} shift(s) clear of zero — "
                              f"/calibrated/runs/{calibrated.judge_run_id}/")
        if not options["no_judge"]:
            conditions_run = demo_conditions_create()
            if conditions_run is not None:
                self.stdout.write(f"judge run #{conditions_run.pk} over three generation conditions: "
                                  f"{conditions_run.scored_items} scored — /judge/conditions/?run={conditions_run.pk}")
        if not options["no_judge"]:
            for line in demo_languages_create():
                self.stdout.write(line)
        mailed = len(getattr(mail, "outbox", [])) - sent_before
        if mailed:
            self.stdout.write(f"{mailed} notification e-mail(s) to the demo people, not sent: each one's "
                              "inbox shows them (/accounts/inbox/)")
        self.stdout.write("")
        self.stdout.write(f"Demo logins ({(settings.SITE_URL or '').rstrip('/')}/):")
        for role, email, password in logins:
            self.stdout.write(f"  {role:<12} {email:<32} {password}")
        if two_factor:
            self.stdout.write("The admin and the panel leads sign in with two-factor authentication; for the local demo,")
            self.stdout.write("get the current code with:  .venv/bin/python manage.py demo_totp admin@faithbench.test")
