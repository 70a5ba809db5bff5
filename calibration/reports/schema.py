"""The report's shape as a tree of dataclasses: what the builder returns, every renderer reads, a snapshot stores
and the API's OpenAPI schema shows.

The tree is the report from builder to renderer (HTML context, CSV, JSON, PDF); JSON exists only at the edges.
`Report.to_json()` (`report_to_dict`) gives the JSON-ready dict a snapshot stores, and `Report.from_json()`
(`report_from_dict`) reads a stored one back, strictly (an unknown or missing key is an error, so the stored
payload, the JSON export and the API schema cannot drift apart); both are the evidence kit's `tree_from_json` /
`tree_to_json` (`evidence/kit/trees.py`), which every kind's tree uses. The API's serializers are
generated from these dataclasses (djangorestframework-dataclasses), so the schema lists every field.
"""
from __future__ import annotations

from dataclasses import dataclass

from evidence.kit.meta import SnapshotMeta
from evidence.kit.trees import JsonObject, optional, tree_from_json, tree_to_json

from ..cycles.ratings import ValidationCell


@dataclass
class Targets:
    alpha: float
    kappa: float
    exact_agreement: float


@dataclass
class JudgeModels:
    primary: str
    fallback: str
    secondary: str


@dataclass(frozen=True)
class Provenance:
    """What a report was computed from, as its caller knows it: the optional part of `Meta` (the builder adds the
    seed, resamples, level, categories, targets and the majority rule)."""

    cycle: str | None = None
    cycle_id: int | None = None
    rubric_version: str | None = None
    judge_run: int | None = None
    judge_models: JudgeModels | None = None
    judge_score_used: str | None = None
    judge_runs_averaged: list[int] | None = None
    software: dict[str, str] | None = None
    raters: str | None = None
    snapshot: SnapshotMeta | None = None


@dataclass
class Meta:
    """What the report was computed from and with."""

    seed: int
    n_resamples: int
    level: str
    categories: list[int]
    targets: Targets
    majority_rule: str
    cycle: str | None = optional()
    cycle_id: int | None = optional()
    rubric_version: str | None = optional()
    judge_run: int | None = optional()
    judge_models: JudgeModels | None = optional()
    judge_score_used: str | None = optional()
    judge_runs_averaged: list[int] | None = optional()  # a series of repeated runs whose scores were averaged
    software: dict[str, str] | None = optional()
    raters: str | None = optional()
    snapshot: SnapshotMeta | None = optional()


@dataclass
class Verdicts:
    """pass / fail / uncertain / undefined against each target."""

    alpha: str
    kappa: str
    exact_agreement: str


@dataclass
class Bootstrap:
    n_resamples: int
    n_degenerate: int
    confidence: float
    method: str
    n_strata: int
    seed: int


@dataclass
class GwetAC2:
    linear: float | None
    quadratic: float | None


@dataclass
class RaterInfluence:
    rater: str
    alpha_without: float | None
    change: float | None


@dataclass
class PairwiseKappa:
    raters: list[str]
    n_units: int
    quadratic_kappa: float | None
    exact_agreement: float | None


@dataclass
class CohenKappa:
    unweighted: float | None
    linear: float | None
    quadratic: float | None


@dataclass
class Interval:
    """A coefficient's 95 % interval: the method reported (chosen by simulated coverage) and whether it is reliable.

    ``method`` is "percentile" or "bca" (unit bootstrap) or "F" (ICC's analytic interval); ``reliable`` is false
    when the method's simulated coverage, estimated at the data's own design, is below 0.93, and ``reason`` then
    says so. ``coverage`` is that figure and ``coverage_basis`` where it came from (absent in reports built
    before they were recorded, and for the F interval).
    """

    low: float | None
    high: float | None
    method: str | None
    reliable: bool
    reason: str | None
    coverage: float | None = optional()
    coverage_basis: str | None = optional()


@dataclass
class RaterDiagnostic:
    """One rater's mean signed difference from the rest of the panel, its interval, and score shares."""

    rater: str
    n_units: int
    mean_difference: float | None
    low: float | None
    high: float | None
    flagged: bool
    shares: dict[str, float]


@dataclass
class BlandAltmanSummary:
    """The judge minus the reference (the expert median, or gold): mean, SD and 95 % limits of agreement."""

    n_units: int
    mean_difference: float | None
    sd: float | None
    lower_limit: float | None
    upper_limit: float | None


@dataclass
class Experts:
    """Agreement of the experts among themselves in one group."""

    level: str
    categories: list[int]
    n_units: int
    n_raters: int
    n_ratings: int
    n_pairable_units: int
    n_unpairable_units: int
    n_values_pairable: int
    krippendorff_alpha: float | None
    alpha_ci: list[float] | None
    alpha_below_min_probability: float | None
    alpha_min: float
    bootstrap: Bootstrap | None
    percent_agreement: float | None
    within_one_agreement: float | None
    fleiss_kappa: float | None
    gwet_ac1: float | None
    gwet_ac2: GwetAC2 | None
    leave_one_rater_out: list[RaterInfluence]
    warnings: list[str]
    pairwise_kappa: list[PairwiseKappa]
    mean_pairwise_quadratic_kappa: float | None
    verdicts: Verdicts
    cohen_kappa: CohenKappa | None = optional()  # only when exactly two experts rated the group
    cohen_kappa_raters: list[str] | None = optional()
    # Statistics v2 (reports computed before it have none of these):
    spearman_rho: float | None = optional()  # two experts only
    kendall_tau_b: float | None = optional()
    icc_2_1: float | None = optional()
    icc_3_1: float | None = optional()
    intervals: dict[str, Interval | None] | None = optional()
    rater_diagnostics: list[RaterDiagnostic] | None = optional()


@dataclass
class AgainstReference:
    """The judge against a reference (the expert majority, or adjudicated gold) in one group."""

    n_units: int
    alpha: float | None
    alpha_ci: list[float] | None
    alpha_below_min_probability: float | None
    quadratic_kappa: float | None
    exact_agreement: float | None
    confusion: list[list[int]] | None
    mean_signed_difference: float | None
    warnings: list[str]
    verdicts: Verdicts
    # Statistics v2 (reports computed before it have none of these):
    spearman_rho: float | None = optional()
    kendall_tau_b: float | None = optional()
    intervals: dict[str, Interval | None] | None = optional()
    bland_altman: BlandAltmanSummary | None = optional()


@dataclass
class Group:
    """One group of units: overall, or one sub-dimension, dimension, tradition or difficulty."""

    kind: str
    value: str
    stratified_by_dimension: bool
    n_units: int
    n_items: int
    experts: Experts
    judge_vs_majority: AgainstReference
    judge_vs_gold: AgainstReference
    panel_alpha_without_judge: float | None
    panel_alpha_with_judge: float | None


@dataclass
class WithdrawnByReason:
    after_adjudication: int
    removed_from_panel: int
    reassigned: int


@dataclass
class Completeness:
    """The cycle's assignments when the snapshot read it: finished, open, and withdrawn (kept, by reason)."""

    assignments: int
    submitted: int
    skipped: int
    open: int
    withdrawn: int
    withdrawn_by_reason: WithdrawnByReason


@dataclass
class LanguageCell:
    """Issue 35: agreement among the cycle's cases in one language (primary subtag): the experts' α with its
    interval and the judge's α against the expert majority, on the units it rests on. Too few items or experts for
    α: no figure, and `words` say why."""

    language: str
    name: str
    n_items: int
    n_units: int
    n_experts: int
    n_pairable_units: int
    alpha: float | None
    alpha_ci: list[float] | None
    n_judged: int
    judge_alpha: float | None
    judge_alpha_ci: list[float] | None
    words: str | None = optional()


@dataclass
class Report:
    """A calibration report: its metadata, the number of experts, every group, and (for a cycle) completeness."""

    meta: Meta
    n_experts: int
    groups: list[Group]
    completeness: Completeness | None = optional()  # for a calibration cycle's snapshot
    validation: list[ValidationCell] | None = optional()  # for a cycle's snapshot: judge α per dimension × tradition
    languages: list[LanguageCell] | None = optional()  # a cycle's snapshot whose cases are in two or more languages

    @property
    def overall(self) -> Group:
        """The overall group."""
        return next(g for g in self.groups if g.kind == "overall")

    def to_json(self) -> JsonObject:
        """The JSON-ready dict a snapshot stores and report.json prints (keys in field order)."""
        return report_to_dict(self)

    @classmethod
    def from_json(cls, payload: JsonObject) -> Report:
        """The typed report of a stored (or built) report dict; raises ReportShapeError naming the bad key."""
        return report_from_dict(payload)


def report_from_dict(payload: JsonObject) -> Report:
    """The typed report of a built (or stored) report dict; raises ReportShapeError naming the bad key."""
    return tree_from_json(Report, payload)


def report_to_dict(report: Report) -> JsonObject:
    """The JSON-ready dict of a typed report, keys in field order, optional metadata left out when unset."""
    return tree_to_json(report)
