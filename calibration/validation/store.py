"""Bias checks as `evidence.Snapshot`s (kind bias_check): each check's kind, its subject (what it read), and the
one function that stores a result. A check is computed at once, so its version is ready when stored (with the
software that computed it, as every snapshot records)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.urls import reverse

from accounts.models import User
from annotations.models import CalibrationCycle
from evaluations.models import JudgeRun, PairwiseRun
from evidence.models import Snapshot, SnapshotQuerySet
from evidence.registry import KindSpec
from evidence.services import snapshot_record

from .artefact import bias_check_check

if TYPE_CHECKING:
    from .payloads import BiasCheckPayload


class CheckKind(models.TextChoices):
    POSITION = "position", "Position bias (§6.2.1)"
    VERBOSITY = "verbosity", "Verbosity (§6.2.2)"
    TRADITION = "tradition", "Tradition fairness (§6.2.3)"
    JUDGES = "judges", "Judge comparison (§6.3.2)"
    RUNS = "runs", "Run-to-run (§8.4)"


def check_label(check: Snapshot) -> str:
    """The check's kind as the pages name it."""
    return CheckKind(check.check_kind).label


def bias_checks() -> SnapshotQuerySet:
    """Every stored bias check, newest first."""
    return Snapshot.objects.of(Snapshot.Kind.BIAS_CHECK).order_by("-requested_at", "-id")


def bias_check_record(
    *, kind: str, payload: BiasCheckPayload, flagged: bool, n: int, requested_by: User | None,
    judge_run: JudgeRun | None = None, pairwise_run: PairwiseRun | None = None, cycle: CalibrationCycle | None = None,
) -> Snapshot:
    """Store one check's result: the next version of its subject (the pairwise run, the cycle or the judge run read)."""
    if kind == CheckKind.POSITION:
        assert pairwise_run is not None, "a position check reads a pairwise run"
        subject = f"position/pairwise-{pairwise_run.pk}"
    elif kind == CheckKind.TRADITION:
        assert cycle is not None, "a tradition check reads a cycle"
        subject = f"tradition/cycle-{cycle.pk}"
    else:
        assert judge_run is not None, f"a {kind} check reads a judge run"
        subject = f"{kind}/run-{judge_run.pk}"
    return snapshot_record(
        kind=Snapshot.Kind.BIAS_CHECK, subject=subject, payload=payload, requested_by=requested_by,
        # no check's payload carries "n_resamples": the version records 0, as it always has
        n_resamples=0, summary={"check": str(kind), "flagged": flagged, "n": n},
        judge_run=judge_run, pairwise_run=pairwise_run, cycle=cycle)


# Registered by CalibrationConfig.ready.
BIAS_CHECK_KIND = KindSpec(kind=Snapshot.Kind.BIAS_CHECK, page_url=lambda s: reverse("calibration:validation"),
                           check=bias_check_check)
