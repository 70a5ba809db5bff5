"""manage.py load_demo — the demo data set, idempotent, with the logins printed at the end."""
from django.core.management.base import BaseCommand
from django.db import transaction

from calibration.demo import demo_people_create
from evaluations.demo import demo_benchmark_load


class Command(BaseCommand):
    help = "Load the demo: traditions, rubric v1.0, test cases, models, responses, TheoBERT cases, people."

    def handle(self, *args, **options) -> None:
        with transaction.atomic():
            reports = demo_benchmark_load()
            logins = demo_people_create()
        for report in reports:
            self.stdout.write(str(report))
        self.stdout.write("")
        self.stdout.write("Demo logins (http://127.0.0.1:8000/):")
        for role, email, password in logins:
            self.stdout.write(f"  {role:<12} {email:<32} {password}")
