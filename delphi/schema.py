"""The JSON shapes Delphi stores and exports, as TypedDicts (no database, no Django).

Stored on the models' JSON fields: a closed round's statistics (`DelphiRound.summary`: `RoundSummaryJSON`), a
closed study's proposal (`DelphiStudy.proposal`: `Proposal`) and the re-scoring report (`DelphiStudy.rescoring`:
`Rescoring`). Exported: the study report (`report.delphi_report_build`: `DelphiReport`). Each field is empty
(`{}`, `Empty`) until its step has happened. The keys and their order are the stored JSON's, so a typed value
serialises to the same bytes as the plain dict it replaced.
"""
from __future__ import annotations

from datetime import datetime
from typing import NotRequired, Required, TypedDict


class Empty(TypedDict):
    """A JSON field before its step: `{}`."""


# --- a closed round (DelphiRound.summary) -----------------------------------------------------------------


class WeightStats(TypedDict):
    """One weight's statistics in a closed round (`dataclasses.asdict` of `stats.delphi.WeightSummary`)."""

    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    mean: float
    share_within_5: float
    converged: bool
    median_change: float | None
    iqr_change: float | None


class RoundSummaryJSON(TypedDict):
    """A closed round: threshold, attrition, convergence and every weight's statistics."""

    threshold: float
    invited: int
    responded: int
    non_responders: int
    attrition: float
    converged: bool
    not_converged: list[str]
    weights: dict[str, WeightStats]


# --- the proposal of a closed study (DelphiStudy.proposal) ------------------------------------------------


class ProposalWeight(TypedDict):
    """One weight of a level: its median, its renormalised weight and the rubric's current one (Decimals as text)."""

    key: str
    median: float
    weight: str
    current: str


class ProposalLevel(TypedDict):
    """One level (the dimensions, or one dimension's sub-dimensions) renormalised to 100."""

    level: str
    label: str
    raw_sum: str
    scale: str
    adjusted: dict[str, str]  # weight key → the rounding adjustment it received
    weights: list[ProposalWeight]  # a list: PostgreSQL's jsonb does not keep the order of object keys


class Proposal(TypedDict):
    round: int
    converged: bool
    levels: list[ProposalLevel]
    stopped_early: NotRequired[bool]  # set when the study is closed


# --- the re-scoring report (DelphiStudy.rescoring) --------------------------------------------------------


class RescoredModel(TypedDict):
    model: str
    old_score: float | None
    new_score: float | None
    old_rank: int
    new_rank: int
    by_dimension: dict[str, float | None]


class SensitivityDetail(TypedDict):
    dimension: str
    delta: float
    rank_changed: bool
    tau: float | None


class SensitivityReport(TypedDict):
    """§6.3.1: every dimension weight ± delta points, renormalised; how often the ranking changes."""

    delta: float
    perturbations: int
    rank_changes: int
    change_rate: float
    min_tau: float | None
    details: list[SensitivityDetail]


class RunSensitivity(TypedDict):
    run: int
    ranking: list[str]
    perturbations: int
    rank_changes: int
    change_rate: float
    min_tau: float | None


class SeriesSensitivity(TypedDict):
    """§8.4: the sensitivity of every run of a judge series and whether they agree on the ranking."""

    runs: list[int]
    per_run: list[RunSensitivity]
    perturbations: int
    rank_changes: int
    same_ranking_in_every_run: bool


class RescoringRun(TypedDict):
    id: int
    label: str
    rubric: str


class Rescoring(TypedDict, total=False):
    """Old and new model scores and ranks, Kendall's τ, sensitivity; or, when unavailable, only the reason."""

    available: Required[bool]
    reason: str  # only when not available
    dimensions_used: list[str]
    dimensions_left_out: list[str]
    items_used: int
    items_skipped: int
    models: list[RescoredModel]
    kendall_tau: float | None
    rank_changed: bool
    sensitivity: SensitivityReport
    run: RescoringRun  # the judge run read (absent when there is none)
    across_runs: SeriesSensitivity  # when the run belongs to a series of two or more


# --- the study report (exported as JSON) ------------------------------------------------------------------


class NamedAllocation(TypedDict):
    """One panelist's allocation in a round, by name (staff only)."""

    expert: str
    email: str
    submitted_at: str
    points: dict[str, str]
    rationales: dict[str, str]


class ReportStudy(TypedDict):
    id: int
    name: str
    tradition: str | None
    rubric: str
    planned_rounds: int
    convergence_threshold: str
    status: str
    converged: bool
    panelists: int
    proposed_rubric: str | None


class ReportWeight(TypedDict):
    key: str
    name: str
    current: str


class ReportRound(TypedDict):
    number: int
    status: str
    opened_at: datetime
    closed_at: datetime | None
    invited: int | None
    responded: int | None
    converged: bool
    summary: RoundSummaryJSON | Empty  # {} while the round is open
    allocations: list[NamedAllocation]


class DelphiReport(TypedDict):
    """Everything about a study: settings, warnings, weights, rounds with named allocations, proposal, re-scoring."""

    study: ReportStudy
    warnings: list[str]
    weights: list[ReportWeight]
    rounds: list[ReportRound]
    proposal: Proposal | Empty
    rescoring: Rescoring | Empty
