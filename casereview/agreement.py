"""A review cycle's agreement report: Krippendorff's α per field at its level of measurement, with bootstrap
intervals; flags; expert difficulty against the corpus's assigned difficulty. Stored as a new report version
(frozen; a new computation is a new version) through `reports.py`."""
from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from typing import Any, TypedDict

from django.db import transaction

from evidence.models import Snapshot
from stats.agreement import pairable_units
from stats.alpha import Level
from stats.bootstrap import named_seed_sequence
from stats.intervals import agreement_interval
from stats.matrix import matrix_from_triples

from .models import CaseFlag, CaseReview, CaseReviewCycle
from .reports import review_report_store
from .rules import DIFFICULTY_ORDER, DIFFICULTY_RANK

# field → (level, code of each answer); "unsure" is its own nominal category
FIELDS: dict[str, tuple[Level, dict[str, float]]] = {
    "valid": ("nominal", {"no": 0.0, "unsure": 1.0, "yes": 2.0}),
    "reference_correct": ("ordinal", {"no": 0.0, "partly": 1.0, "yes": 2.0}),
    "difficulty": ("ordinal", {str(d): float(i) for d, i in DIFFICULTY_RANK.items()}),
    "clarity": ("ordinal", {str(v): float(v) for v in range(4)}),
}
FIELD_LABELS = {"valid": "Valid test of its dimension", "reference_correct": "Reference answer correct",
                "difficulty": "Difficulty", "clarity": "Clarity (0–3)"}
MIN_UNITS = 10


class ReviewRow(TypedDict):
    """One submitted review, as the report reads it (and hashes it)."""

    test_case_id: int
    test_case__external_id: str
    test_case__difficulty: str
    test_case__dimension: str
    case_version: int
    expert_id: int
    valid: str
    reference_correct: str
    difficulty: str
    clarity: int


class FieldAgreement(TypedDict):
    field: str
    label: str
    level: str
    units: int
    alpha: float | None
    interval: list[float | None] | None
    note: str


class DifficultyCrosstab(TypedDict):
    levels: list[str]
    table: dict[str, dict[str, int]]
    cases: int
    same: int
    share_same: float | None


class FlagCase(TypedDict):
    case: str
    version: int
    reasons: list[str]
    status: str


class FlagSummary(TypedDict):
    total: int
    by_reason: dict[str, int]
    by_status: dict[str, int]
    cases: list[FlagCase]


class ReviewCounts(TypedDict):
    assigned: int
    submitted: int


class ReviewReportPayload(TypedDict):
    """The stored report (its JSON)."""

    cycle: int
    name: str
    panel: str
    seed: int
    resamples: int
    reviews: ReviewCounts
    cases_reviewed: int
    experts: int
    agreement: list[FieldAgreement]
    flags: FlagSummary
    difficulty: DifficultyCrosstab


def review_rows(cycle: CaseReviewCycle) -> list[ReviewRow]:
    """The cycle's submitted reviews, in a fixed order."""
    rows = (CaseReview.objects.filter(cycle=cycle, submitted_at__isnull=False)
            .order_by("test_case__external_id", "case_version", "expert_id")
            .values("test_case_id", "test_case__external_id", "test_case__difficulty", "test_case__dimension",
                    "case_version", "expert_id", "valid", "reference_correct", "difficulty", "clarity"))
    return [ReviewRow(**row) for row in rows]  # type: ignore[typeddict-item]


def agreement(rows: list[ReviewRow], *, n_resamples: int = 1000, seed: int = 0) -> list[FieldAgreement]:
    """Krippendorff's α of each field over the reviewed cases, with a bootstrap interval."""
    experts = sorted({r["expert_id"] for r in rows})
    units = sorted({(r["test_case_id"], r["case_version"]) for r in rows})
    out = []
    for name, (level, codes) in FIELDS.items():
        matrix = matrix_from_triples(((r["expert_id"], (r["test_case_id"], r["case_version"]),
                                       codes[str(r[name])])  # type: ignore[literal-required]
                                      for r in rows), experts, units)
        pairable = int(pairable_units(matrix).sum())
        entry = FieldAgreement(field=name, label=FIELD_LABELS[name], level=level, units=pairable,
                               alpha=None, interval=None, note="")
        if pairable >= 2:
            result = agreement_interval(matrix, "krippendorff_alpha", level=level, categories=sorted(codes.values()),
                                        n_resamples=n_resamples, seed=named_seed_sequence(seed, name))
            entry["alpha"] = result.estimate
            entry["interval"] = list(result.interval) if result.interval is not None else None
            if pairable < MIN_UNITS:
                entry["note"] = f"only {pairable} cases with two or more reviews: the interval is wide"
            if result.estimate is None:
                entry["note"] = "α is undefined: every review gave the same answer"
        else:
            entry["note"] = "fewer than two reviewed cases"
        out.append(entry)
    return out


def difficulty_crosstab(rows: list[ReviewRow]) -> DifficultyCrosstab:
    """Assigned difficulty (rows) × the reviewers' median difficulty (columns; a tie takes the lower level)."""
    by_case: dict[tuple[int, int], list[int]] = defaultdict(list)
    assigned: dict[tuple[int, int], str] = {}
    for r in rows:
        key = (r["test_case_id"], r["case_version"])
        by_case[key].append(DIFFICULTY_RANK[r["difficulty"]])
        assigned[key] = r["test_case__difficulty"]
    levels = [str(d) for d in DIFFICULTY_ORDER]
    table = {a: dict.fromkeys(levels, 0) for a in levels}
    agree = 0
    for key, ranks in by_case.items():
        ordered = sorted(ranks)
        median = levels[ordered[(len(ordered) - 1) // 2]]
        table[assigned[key]][median] += 1
        agree += median == assigned[key]
    return DifficultyCrosstab(levels=levels, table=table, cases=len(by_case), same=agree,
                              share_same=agree / len(by_case) if by_case else None)


def report_build(cycle: CaseReviewCycle, *, n_resamples: int = 1000, seed: int = 0
                 ) -> tuple[ReviewReportPayload, str]:
    """The report's payload and the SHA-256 of the review rows it was computed from."""
    rows = review_rows(cycle)
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    flags = list(CaseFlag.objects.filter(cycle=cycle).select_related("test_case").order_by("test_case__external_id"))
    reasons = Counter(reason for flag in flags for reason in flag.reasons)
    progress = CaseReview.objects.filter(cycle=cycle)
    payload = ReviewReportPayload(
        cycle=cycle.pk, name=cycle.name, panel=cycle.panel.name, seed=seed, resamples=n_resamples,
        reviews=ReviewCounts(assigned=progress.count(), submitted=len(rows)),
        cases_reviewed=len({(r["test_case_id"], r["case_version"]) for r in rows}),
        experts=len({r["expert_id"] for r in rows}),
        agreement=agreement(rows, n_resamples=n_resamples, seed=seed),
        flags=FlagSummary(total=len(flags), by_reason=dict(sorted(reasons.items())),
                          by_status=dict(sorted(Counter(f.status for f in flags).items())),
                          cases=[FlagCase(case=f.test_case.external_id, version=f.case_version, reasons=f.reasons,
                                          status=f.status) for f in flags]),
        difficulty=difficulty_crosstab(rows),
    )
    return payload, digest


@transaction.atomic
def review_report_snapshot(*, cycle: CaseReviewCycle, user: Any = None, n_resamples: int = 1000,
                           seed: int = 0) -> Snapshot:
    """Compute a cycle's agreement report and store it as its next version."""
    cycle = CaseReviewCycle.objects.select_for_update().get(pk=cycle.pk)
    payload, digest = report_build(cycle, n_resamples=n_resamples, seed=seed)
    return review_report_store(cycle=cycle, payload=payload, input_hash=digest, seed=seed, user=user)
