"""`manage.py compile_catalogues`: every locale/<ll>/LC_MESSAGES/django.po → its .mo, without GNU gettext
(config/catalogues.py). The .mo files are committed; run this after editing a .po (docs/languages.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from config.catalogues import compile_po


class Command(BaseCommand):
    help = "Compile the interface's .po catalogues to .mo (no gettext needed)."

    def handle(self, *args: Any, **options: Any) -> None:
        for root in settings.LOCALE_PATHS:
            for po in sorted(Path(root).glob("*/LC_MESSAGES/django.po")):
                self.stdout.write(f"compiled {compile_po(po)}")
