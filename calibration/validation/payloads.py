"""The JSON shapes a bias check stores (`evidence.Snapshot.payload` of kind bias_check), one per check kind, keys in
the order they are stored (a payload's hash is its JSON: the order is part of it). `<kind>_payload(check)` reads a
stored check back as its kind's shape, once, at the edge."""
from __future__ import annotations

from typing import NotRequired, TypedDict, cast

from evidence.models import Snapshot
from stats.bias import LengthBiasJson, PositionBiasJson


class PositionPayload(TypedDict):
    """§6.2.1: a pairwise run's reversal rate per dimension and over all."""

    pairwise_run: int
    model: str
    threshold: float
    groups: dict[str, PositionBiasJson]
    unreadable_calls: int
    n: int
    flagged: bool
    # issue 32 (absent in checks stored before it): the minimum of pairs per group and whether the run is a trial
    # (fewer pairs over all dimensions: no verdict, never the validation status's check)
    min_cases: NotRequired[int]
    trial: NotRequired[bool]


class ModelLength(TypedDict):
    raw: float
    length_normalised: float
    mean_words: float


class VerbosityGroup(LengthBiasJson):
    """One group's length bias, its means, and — when flagged — the length-normalised scores."""

    mean_words: float
    judge_mean: float
    normalised_spread: NotRequired[float]
    raw_spread: NotRequired[float]
    models: NotRequired[dict[str, ModelLength]]


class VerbosityPayload(TypedDict):
    """§6.2.2: a judge run's length bias per dimension and over all."""

    judge_run: int
    cycle: int | None
    threshold: float
    scale: str
    groups: dict[str, VerbosityGroup]
    flagged: bool
    n: int


class TraditionGroup(TypedDict):
    """One scored × scoring tradition × dimension: out-group minus in-group mean score."""

    scored: str
    scoring: str
    dimension: str
    n_items: int
    mean_difference: float | None
    ci: list[float] | None
    flagged: bool


class JudgeTraditionGap(TypedDict):
    alpha: float | None
    gap: float | None
    n_units: int
    mean_signed_difference: float | None
    difference_to_other_traditions: float | None
    flagged: bool


class JudgeGap(TypedDict):
    """The judge per tradition, from the newest ready report of a standard cycle."""

    cycle: int | None
    version: int
    pooled_alpha: float | None
    traditions: dict[str, JudgeTraditionGap]
    flagged: bool


class TraditionPayload(TypedDict):
    """§6.2.3: a cross-tradition cycle's out-group differences, and the judge's per-tradition gap."""

    cycle: int
    threshold_points: float
    groups: list[TraditionGroup]
    judge_gap: JudgeGap | None
    n: int
    flagged: bool


class AgreementThresholds(TypedDict):
    alpha_min: float
    alpha_good: float
    spread_review: float


class AgreementGroup(TypedDict):
    n_units: int
    alpha: float | None
    alpha_ci: list[float] | None
    verdict: str
    flagged: bool
    good: bool
    exact_agreement: float | None


class ReviewItem(TypedDict):
    """A response whose composite spreads across the runs: listed for expert review."""

    response: int
    dimension: str
    sd: float
    composites: list[float]


class AgreementPayload(TypedDict):
    """§6.3.2 / §8.4: α among judge runs per dimension and over all, and the high-spread responses."""

    runs: list[int]
    models: list[str]
    thresholds: AgreementThresholds
    n_responses: int
    groups: dict[str, AgreementGroup]
    mean_item_sd: float | None
    review: list[ReviewItem]
    flagged: bool


BiasCheckPayload = PositionPayload | VerbosityPayload | TraditionPayload | AgreementPayload


def position_payload(check: Snapshot) -> PositionPayload:
    """A stored position check's payload (empty before it is computed)."""
    return cast(PositionPayload, check.document)


def verbosity_payload(check: Snapshot) -> VerbosityPayload:
    """A stored verbosity check's payload."""
    return cast(VerbosityPayload, check.document)


def tradition_payload(check: Snapshot) -> TraditionPayload:
    """A stored tradition-fairness check's payload."""
    return cast(TraditionPayload, check.document)


def agreement_payload(check: Snapshot) -> AgreementPayload:
    """A stored judge-comparison or run-to-run check's payload."""
    return cast(AgreementPayload, check.document)

