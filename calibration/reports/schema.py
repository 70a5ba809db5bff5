"""The report's shape as a tree of dataclasses: what the builder returns, every renderer reads, a snapshot stores
and the API's OpenAPI schema shows.

The tree is the report from builder to renderer (HTML context, CSV, JSON, PDF); JSON exists only at the edges.
`Report.to_json()` (`report_to_dict`) gives the JSON-ready dict a snapshot stores, and `Report.from_json()`
(`report_from_dict`) reads a stored one back, strictly (an unknown or missing key is an error, so the stored
payload, the JSON export and the API schema cannot drift apart). `tree_from_json` / `tree_to_json` do the same for
any dataclass tree (the study report's and the calibrated leaderboard's use them too). The API's serializers are
generated from these dataclasses (djangorestframework-dataclasses), so the schema lists every field.
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

T = TypeVar("T")
# A JSON object at an edge of the tree: what a snapshot stores, a file holds or the API sends.
JsonObject = dict[str, Any]


def optional(default: Any = None) -> Any:
    """A key that a report carries only in some cases (left out of the dict when unset)."""
    return field(default=default, metadata={"optional": True})


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


@dataclass
class SnapshotMeta:
    """Which snapshot this is: its version and the hash of its input rows (ratings.csv)."""

    version: int
    input_hash: str
    input_file: str
    requested_at: str


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
class ValidationCell:
    """The judge against the expert majority in one dimension × tradition (calibration/reports/cells.py)."""

    dimension: str
    tradition: str
    n_units: int
    n_items: int
    n_experts: int
    n_judged: int
    alpha: float | None
    alpha_ci: list[float] | None
    status: str  # validated / acceptable / uncertain / not validated / no data


@dataclass
class Report:
    """A calibration report: its metadata, the number of experts, every group, and (for a cycle) completeness."""

    meta: Meta
    n_experts: int
    groups: list[Group]
    completeness: Completeness | None = optional()  # for a calibration cycle's snapshot
    validation: list[ValidationCell] | None = optional()  # for a cycle's snapshot: judge α per dimension × tradition

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


class ReportShapeError(ValueError):
    """A built report does not have the documented shape (a key missing, unknown or of the wrong kind)."""


def _convert(kind: Any, value: Any, path: str) -> Any:
    if kind is Any:  # a free-form JSON value (a stats summary's entries): taken as it is
        return value
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [k for k in typing.get_args(kind) if k is not type(None)]
        if value is None:
            if len(options) == len(typing.get_args(kind)):
                raise ReportShapeError(f"{path}: must not be null")
            return None
        return _convert(options[0], value, path)
    if origin is list:
        if not isinstance(value, list):
            raise ReportShapeError(f"{path}: expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(kind)
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
        _, item = typing.get_args(kind)
        return {k: _convert(item, v, f"{path}.{k}") for k, v in value.items()}
    if typing.is_typeddict(kind):  # a stats summary (stats.shapes): a JSON object, its keys typed for mypy only
        if not isinstance(value, dict):
            raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
        return dict(value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if isinstance(value, kind):  # a subtree the builder made typed already
            return value
        return _dataclass(kind, value, path)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ReportShapeError(f"{path}: expected a number, got {type(value).__name__}")
        return value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReportShapeError(f"{path}: expected {kind.__name__}, got {type(value).__name__}")
    return value


@functools.cache
def _shape(cls: type) -> tuple[dict[str, object], dict[str, dataclasses.Field]]:
    """A dataclass's resolved field types and fields, once per class (a report has ~10,000 instances)."""
    return typing.get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def _dataclass(cls: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
    hints, fields = _shape(cls)
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ReportShapeError(f"{path}: unknown key(s) {', '.join(unknown)}")
    kwargs = {}
    for name, spec in fields.items():
        if name not in value:
            if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise ReportShapeError(f"{path}.{name}: missing")
            continue
        kwargs[name] = _convert(hints[name], value[name], f"{path}.{name}")
    return cls(**kwargs)


def tree_from_json(cls: type[T], payload: Any, path: str = "report") -> T:
    """The dataclass tree `cls` of a JSON value, checked strictly; raises ReportShapeError naming the bad key."""
    return _dataclass(cls, payload, path)


def tree_to_json(value: Any, *, sort_maps: bool = True) -> Any:
    """The JSON-ready value of a dataclass tree: keys in field order, optional keys left out when unset; free-form
    maps sorted by key (`sort_maps`, the cycle report's rule) or kept in their order."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: tree_to_json(getattr(value, f.name), sort_maps=sort_maps) for f in dataclasses.fields(value)
                if not (f.metadata.get("optional") and getattr(value, f.name) is None)}
    if isinstance(value, list | tuple):
        return [tree_to_json(v, sort_maps=sort_maps) for v in value]
    if isinstance(value, dict):  # free-form maps (software versions): sorted, so a stored payload renders alike
        return {k: tree_to_json(value[k], sort_maps=sort_maps) for k in (sorted(value) if sort_maps else value)}
    return value


def report_from_dict(payload: JsonObject) -> Report:
    """The typed report of a built (or stored) report dict; raises ReportShapeError naming the bad key."""
    return tree_from_json(Report, payload)


def report_to_dict(report: Report) -> JsonObject:
    """The JSON-ready dict of a typed report, keys in field order, optional metadata left out when unset."""
    return tree_to_json(report)
