"""Where the programme's frozen results are stored and read: case-review agreement reports (`CaseReviewReport`,
versioned per cycle) and IRT difficulty fits (`DifficultyFit`). Nothing else in `casereview` touches those two
models, so their storage can change here alone.

TEMPORARY until evidence lands: both models still live in `calibration.models`, an app above this one; the
import-linter contract "apps" ignores exactly these imports (pyproject.toml).
"""
from __future__ import annotations

from typing import Any

from django.db.models import Max

from calibration.models import CaseReviewReport, DifficultyFit

from .models import CaseReviewCycle

__all__ = ["CaseReviewReport", "DifficultyFit", "difficulty_fit_equated_store", "difficulty_fit_find",
           "difficulty_fit_get", "difficulty_fit_store", "difficulty_fits_exist", "difficulty_fits_list",
           "review_report_latest", "review_report_store"]


def review_report_store(*, cycle: CaseReviewCycle, payload: Any, input_hash: str, seed: int,
                        user: Any = None) -> CaseReviewReport:
    """Store the next version of a cycle's agreement report (call with the cycle locked)."""
    version = (CaseReviewReport.objects.filter(cycle=cycle).aggregate(v=Max("version"))["v"] or 0) + 1
    return CaseReviewReport.objects.create(cycle=cycle, version=version, payload=payload, input_hash=input_hash,
                                           seed=seed, created_by=user if getattr(user, "pk", None) else None)


def review_report_latest(cycle: CaseReviewCycle) -> CaseReviewReport | None:
    """The newest stored agreement report of a cycle."""
    return CaseReviewReport.objects.filter(cycle=cycle).order_by("-version").first()


def difficulty_fit_store(*, dimension: str, rotation: str, items: int, persons: int, payload: Any,
                         user: Any = None) -> DifficultyFit:
    """Store an IRT fit."""
    return DifficultyFit.objects.create(dimension=dimension, rotation=rotation, items=items, persons=persons,
                                        payload=payload, created_by=user if getattr(user, "pk", None) else None)


def difficulty_fit_equated_store(*, fit: DifficultyFit, base: DifficultyFit, payload: Any) -> DifficultyFit:
    """Record that `fit` was put on `base`'s scale (its payload gains the equating)."""
    fit.payload = payload
    fit.equated_to = base
    fit.save(update_fields=["payload", "equated_to"])
    return fit


def difficulty_fits_list(limit: int = 50) -> list[DifficultyFit]:
    """The newest fits, without their payloads."""
    return list(DifficultyFit.objects.defer("payload")[:limit])


def difficulty_fits_exist() -> bool:
    return DifficultyFit.objects.exists()


def difficulty_fit_get(pk: int) -> DifficultyFit:
    return DifficultyFit.objects.get(pk=pk)


def difficulty_fit_find(pk: int) -> DifficultyFit | None:
    return DifficultyFit.objects.filter(pk=pk).first()
