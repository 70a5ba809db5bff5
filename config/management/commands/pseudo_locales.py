"""`manage.py pseudo_locales [--out DIR]`: the pseudo-locales en-xa (accented, lengthened) and ar-xb (right to left)
from the shipped Spanish catalogue's messages (config/catalogues.py). The tests make their own in a temporary
directory; this command is for looking at pages by hand (add the codes to LANGUAGES in a local settings file)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.catalogues import PSEUDO_LOCALES, pseudo_catalogue


class Command(BaseCommand):
    help = "Write the pseudo-locale catalogues (en-xa, ar-xb) generated from the shipped catalogue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "build" / "pseudo-locale"),
                            help="Directory to write <ll_RR>/LC_MESSAGES/django.{po,mo} into.")
        parser.add_argument("--source", default="es", help="The shipped language whose catalogue lists the messages.")

    def handle(self, *args: Any, **options: Any) -> None:
        source = Path(settings.LOCALE_PATHS[0]) / options["source"] / "LC_MESSAGES" / "django.po"
        if not source.exists():
            raise CommandError(f"--source: no catalogue at {source}")
        for code in PSEUDO_LOCALES:
            self.stdout.write(f"{code}: {pseudo_catalogue(source, Path(options['out']), code)}")
