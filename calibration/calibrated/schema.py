"""The calibrated leaderboard's shape as a tree of dataclasses: what the builder returns, the files, the page and the
variance budget read, and a snapshot stores (`CalibratedReport.to_json()`; a stored one is read back with
`CalibratedReport.from_json()`, strictly). Keys keep the order the tree lists them in."""
from __future__ import annotations

from dataclasses import dataclass

from evidence.kit.trees import JsonObject, optional, tree_from_json, tree_to_json


@dataclass(kw_only=True)
class Span:
    """The judge-only score of a cell with its stratified percentile bootstrap interval, on `n` judged responses."""

    estimate: float | None
    lower: float | None
    upper: float | None
    n: int


@dataclass(kw_only=True)
class Skipped:
    """A stratum left out of an estimate (fewer than two usable labels)."""

    stratum: str
    n: int
    reason: str


@dataclass(kw_only=True)
class Estimate:
    """A PPI++ estimate (calibrated, shift or gold-only) with its interval, λ, the labels used and what was left out."""

    estimate: float | None
    lower: float | None
    upper: float | None
    se: float | None
    lam: float | None
    lam_by_stratum: dict[str, float | None] | None = optional()  # absent when nothing could be estimated
    n: int
    covered_weight: float | None
    skipped: list[Skipped]
    note: str | None = optional()  # why a model has no calibrated score
    # schema 2 (issue 31): the interval is an anytime-valid confidence sequence after `n` labels (looks) in
    # arrival order; `se` is its half-width ÷ z₁₋α/₂ (the normal-equivalent standard error the variance budget
    # adds as judge error). status: ok / few_labels / no_labels / invalid; words: why, in plain words.
    status: str | None = optional()
    words: str | None = optional()


@dataclass(kw_only=True)
class Verdict:
    """A live verdict valid under continuous monitoring (stats.anytime.pair_verdict): "separated" (`leader`
    names who is ahead), "equivalent" (within ±margin), "continue", or "invalid" (words say why)."""

    verdict: str
    leader: str | None
    margin: float
    lower: float | None
    upper: float | None
    looks: int
    words: str


@dataclass(kw_only=True)
class Advice:
    """The controller: what would bring a verdict — the lever ("labels": more expert labels, `where`;
    "experts": more experts per item, panel noise dominates the residual; "none": a verdict is reached or none is
    in reach) and the expected further labels (per model for a pair) to a verdict (stats.anytime.labels_to_verdict)."""

    lever: str
    where: list[str]
    labels_to_verdict: int | None
    target: str
    panel_share: float | None  # panel noise ÷ residual variance (None: not measured)
    words: str


@dataclass(kw_only=True)
class Evidence:
    """The evidence meter: more expert labels needed for the target half-width, and the hours they cost."""

    more_labels: int | None
    expert_hours: float | None
    note: str = ""  # why there is no number (versions computed before 2026-11 have none)
    raters_per_item: float | None = optional()  # a model's meter only
    target_half_width: float | None = optional()
    verdict: Verdict | None = optional()  # schema 2: the shift's verdict (judge vs experts) this meter works towards
    advice: Advice | None = optional()


@dataclass(kw_only=True)
class Cell:
    """One model in one dimension or tradition."""

    judge_only: Span
    calibrated: Estimate
    shift: Estimate
    evidence: Evidence


@dataclass(kw_only=True)
class TruthSensitivity:
    """Truth with rater severity (issue 34 §6), a sensitivity: over the model's (or cell's) judged, expert-labelled
    responses that have both truths, the mean panel-mean truth, the mean severity-adjusted truth (the many-facet
    model's fair average, `calibration.cycles.fair_truth`) and the shift between them (adjusted − panel mean), on
    the 0–1 composite. `labelled`: the responses with a panel-mean truth; `n` of them also have the adjusted one.
    `words` says why a number is missing or rests on fewer responses than `labelled`."""

    n: int
    labelled: int
    panel_mean: float | None
    severity_adjusted: float | None
    shift: float | None
    words: str | None = optional()


@dataclass(kw_only=True)
class ModelEntry:
    """One model: both boards overall, the shift, gold-only sensitivity, the meter, its cells and its rank set."""

    model: str
    family: str
    judged: int
    not_scored: int
    self_preference: bool
    judge_only: Span
    calibrated: Estimate
    shift: Estimate
    gold_only: Estimate
    evidence: Evidence
    by_dimension: dict[str, Cell]
    by_tradition: dict[str, Cell]
    rank_set: list[int] | None = None
    # issue 34 §6 (optional: absent in versions computed before it): the truth with rater severity, overall and per
    # dimension
    severity_truth: TruthSensitivity | None = optional()
    severity_truth_by_dimension: dict[str, TruthSensitivity] | None = optional()
    # issue 35: one cell per case language (primary subtag: "es" holds es-419 and es-MX), present only when the
    # run's judged responses are in two or more languages (with one, the language cell is the model's overall score)
    by_language: dict[str, Cell] | None = optional()


@dataclass(kw_only=True)
class Pair:
    """Two models' calibrated difference with its Bonferroni-simultaneous interval."""

    model_a: str
    model_b: str
    adjacent: bool
    separated: bool
    estimate: float | None
    lower: float | None
    upper: float | None
    more_labels_each: int | None
    expert_hours: float | None
    # schema 2: the anytime difference at level α (the verdict's; the interval above is the Bonferroni one of the
    # rank sets), paired per case when both models' responses to the same cases were labelled
    paired: bool | None = optional()
    verdict: Verdict | None = optional()
    advice: Advice | None = optional()


@dataclass(kw_only=True)
class SnapshotRef:
    """Which snapshot this is and what it was computed from."""

    version: int
    input_hash: str
    input_file: str
    judge_run: int
    judge: str
    cycle: str
    cycle_id: int


@dataclass(kw_only=True)
class CalibratedMeta:
    alpha: float
    confidence: float
    seed: int
    n_resamples: int
    target_half_width: float
    seconds_per_item: float | None
    judge_families: list[str]
    truth: str
    estimator: str
    judge_only: str
    rank_method: str
    snapshot: SnapshotRef | None = optional()
    margin: float | None = optional()  # schema 2: the equivalence margin of the verdicts (composite points)
    horizon: int | None = optional()  # labels per cell at which the sequences are narrowest (fixed in advance)
    arrival: str | None = optional()  # how the labels are ordered
    # issue 34 §6: how the severity-adjusted truth was made, and each panel whose rater model could not be fitted
    severity_truth: str | None = optional()
    severity_notes: list[str] | None = optional()
    # issue 32: fewer judged responses than `min_cases`: listed, never ranked nor paired; `trial`: no model reaches it
    min_cases: int | None = optional()
    trial: bool | None = optional()
    languages: list[str] | None = optional()  # issue 35: the case languages of the judged responses (primary subtags)


@dataclass(kw_only=True)
class Counts:
    judged: int
    responses: int
    expert_labelled: int
    used: int
    excluded: dict[str, int]


@dataclass(kw_only=True)
class CalibratedReport:
    """The calibrated leaderboard of one judge run against one cycle's expert labels."""

    schema: int
    meta: CalibratedMeta
    counts: Counts
    warnings: list[str]
    statements: list[str]
    models: list[ModelEntry]
    pairs: list[Pair]

    def to_json(self) -> JsonObject:
        """The JSON-ready dict a snapshot stores (keys in the tree's order, maps in theirs)."""
        payload: JsonObject = tree_to_json(self, sort_maps=False)
        return payload

    @classmethod
    def from_json(cls, payload: JsonObject) -> CalibratedReport:
        """The typed leaderboard of a stored one; raises ReportShapeError naming a bad key."""
        return tree_from_json(cls, payload, "report")
