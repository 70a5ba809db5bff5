"""``manage.py cross_tradition_cycle --name N --pair reformed:catholic [--pair catholic:reformed …]
[--per-tradition 30] [--seed S]``: a cross-tradition cycle (methodology §6.2.3) — each scored tradition's sample goes
to its own panel and, blind as usual, to the scoring traditions' panels. Check it with judge_bias tradition."""
from __future__ import annotations

import random
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from calibration.cycles.selectors import cycle_assignment_completeness, cycle_item_counts
from calibration.validation.tradition import cross_tradition_cycle_commit


class Command(BaseCommand):
    help = "Commit a cross-tradition calibration cycle (tradition fairness, §6.2.3)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--pair", action="append", required=True, metavar="SCORING:SCORED",
                            help="e.g. reformed:catholic — Reformed experts also score Catholic cases (repeatable)")
        parser.add_argument("--per-tradition", type=int, default=30, help="responses drawn per scored tradition")
        parser.add_argument("--seed", type=int, help="random seed (default: a new one, printed)")

    def handle(self, *args: Any, **options: Any) -> None:
        pairs = {}
        for raw in options["pair"]:
            scoring, _, scored = raw.partition(":")
            if not scoring or not scored:
                raise CommandError(f"--pair {raw!r}: use SCORING:SCORED, e.g. reformed:catholic")
            pairs[scoring.strip()] = scored.strip()
        seed = options["seed"] if options["seed"] is not None else random.SystemRandom().randrange(2**31)
        try:
            cycle = cross_tradition_cycle_commit(name=options["name"], pairs=pairs,
                                                 per_tradition=options["per_tradition"], seed=seed)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        items = cycle_item_counts(cycle=cycle)["total"]
        assignments = cycle_assignment_completeness(cycle=cycle)["assignments"]
        self.stdout.write(f"cycle {cycle.pk} ({cycle.name}), seed {seed}: {items} items, "
                          f"{assignments} assignments; when scored: manage.py judge_bias tradition --cycle {cycle.pk}")
