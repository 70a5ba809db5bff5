"""Reads for the validation page and its check forms: which cycles can serve as a check's reference."""
from __future__ import annotations

from django.db.models import QuerySet

from annotations.models import CalibrationCycle

from .store import CheckKind


def cycles_with_ready_report(*, limit: int = 50) -> QuerySet[CalibrationCycle]:
    """The newest cycles that have a ready cycle report (the page's report links)."""
    return (CalibrationCycle.objects.filter(snapshots__kind="cycle_report", snapshots__status="ready")
            .distinct().order_by("-id")[:limit])


def cycle_rows(*, limit: int = 200) -> list[tuple[int, str, str]]:
    """(id, name, kind) of the newest `limit` cycles, in one query (the check forms' choices)."""
    return list(CalibrationCycle.objects.order_by("-id").values_list("pk", "name", "kind")[:limit])


def cycle_choices_for(kind: str) -> list[tuple[int, str]]:
    """A check's reference-cycle choices, newest first: every cycle, or cross-tradition ones for that check."""
    cycles = CalibrationCycle.objects.order_by("-id")
    if kind == CheckKind.TRADITION:
        cycles = cycles.filter(kind=CalibrationCycle.Kind.CROSS_TRADITION)
    return [(c.pk, f"#{c.pk} {c.name}") for c in cycles[:100]]
