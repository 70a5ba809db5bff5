"""The expert-calibrated leaderboard from plain rows — no database (the builder step of a snapshot).

One input row per judged response (`InputRow`; the snapshot's `inputs.csv` holds exactly these rows, so a
bundle recomputes byte for byte): its model and facets, the judge's decisive composite, and — for responses in
the calibration cycle — the experts' truth composite (`calibration.cycles.truth`), the gold-only truth
and the item's inclusion probability.

For every model, overall and per dimension and per tradition:
- **judge-only**: the difficulty-weighted mean of the judge's composites (methodology §5.4.2) with the
  leaderboard's stratified percentile bootstrap (§5.4, §5.7.1) — it covers the sampling of test cases only;
- **expert-calibrated**: PPI++ (`stats.ppi`, power-tuned λ): the judge's weighted mean over every judged
  response, corrected by the inverse-probability-weighted mean residual Y − λŶ on the expert-labelled ones.
  Population weights are difficulty weights; a labelled response weighs difficulty weight / inclusion
  probability (edge cases, picked on purpose, are certain given the pick: probability 1, a take-all stratum).
  Strata are the dimensions (the draw is made per dimension); a stratum with fewer than two
  usable labels is reported and left out (the estimate then covers a stated share of the model's weight);
- **shift** = calibrated − judge, estimated directly as the weighted mean residual Y − Ŷ with its own
  interval: the judge's bias on that model (its self-preference when the judge's family is the model's).
Rank sets: Bonferroni-simultaneous intervals on every pairwise difference of calibrated overall scores; a
model's rank is the set {1 + #models clearly above … K − #models clearly below}.
Evidence meter: `stats.ppi.labels_needed` with the residual and judge variances observed, for a target
half-width per model and for separating each adjacent pair whose order is uncertain.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.stats import norm

from evaluations.methodology import DIFFICULTY_WEIGHTS
from stats.bootstrap import named_seed
from stats.means import bootstrap_weighted_mean_ci, bootstrap_weighted_mean_ci_with_strata, weighted_mean
from stats.ppi import (
    Difference,
    MeanEstimate,
    StratifiedEstimate,
    Stratum,
    labels_needed,
    mean_difference,
    ppi_stratified_mean,
)

from .schema import (
    CalibratedMeta,
    CalibratedReport,
    Cell,
    Counts,
    Estimate,
    Evidence,
    ModelEntry,
    Pair,
    Skipped,
    Span,
)

USABLE_BASES = ("drawn", "carried", "recomputed", "cross", "edge_case")
DEFAULT_TARGET_HALF_WIDTH = 0.1
MIN_LABELS_FOR_WORDS = 10  # a shift is put into words only on at least this many expert labels
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class InputRow:
    """One judged response (the unit of inputs.csv)."""

    response_id: int
    model: str
    family: str
    dimension: str
    tradition: str
    difficulty: str
    judge: float | None  # the judge's decisive composite; None: not scored (failed, excluded from both boards)
    expert: float | None  # expert truth composite (gold where adjudicated, else panel mean); None: not labelled
    expert_gold: float | None  # gold-only truth (every sub-dimension adjudicated); for the sensitivity check
    inclusion_probability: float | None  # edge cases: 1 (certain, given the pick: their own take-all stratum)
    inclusion_basis: str  # drawn, carried, recomputed, cross, edge_case, unknown; "" when not labelled
    n_raters: int


@dataclass(frozen=True)
class Options:
    alpha: float = 0.05
    n_resamples: int = 1000
    seed: int = 0
    target_half_width: float = DEFAULT_TARGET_HALF_WIDTH
    seconds_per_item: float | None = None  # median active seconds per expert per item
    judge_families: tuple[str, ...] = ()  # the families of the run's judges (self-preference)


def _r(value: float | None, places: int = 6) -> float | None:
    """Rounded for the stored tree (stable JSON across platforms); None for missing or NaN."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return round(float(value), places)


def _span(estimate: float | None, lower: float | None, upper: float | None, *, n: int) -> Span:
    return Span(estimate=_r(estimate), lower=_r(lower), upper=_r(upper), n=n)


@dataclass
class _Group:
    """The rows of one (model, facet) cell as arrays."""

    judge: np.ndarray
    weight: np.ndarray
    dimension: np.ndarray
    labelled: np.ndarray  # bool: usable expert label
    expert: np.ndarray
    probability: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[InputRow], truth: str) -> _Group:
        scored = [r for r in rows if r.judge is not None]
        value = (lambda r: r.expert) if truth == "panel" else (lambda r: r.expert_gold)
        usable = [value(r) is not None and r.inclusion_basis in USABLE_BASES
                  and r.inclusion_probability is not None and r.inclusion_probability > 0 for r in scored]
        return cls(
            judge=np.array([r.judge for r in scored], dtype=float),
            weight=np.array([DIFFICULTY_WEIGHTS[r.difficulty] for r in scored], dtype=float),
            dimension=np.array([r.dimension for r in scored], dtype=object),
            labelled=np.array(usable, dtype=bool),
            expert=np.array([value(r) if ok else math.nan for r, ok in zip(scored, usable, strict=True)], dtype=float),
            probability=np.array([r.inclusion_probability if ok else math.nan
                                  for r, ok in zip(scored, usable, strict=True)], dtype=float),
        )

    def strata(self, *, residual: bool = False) -> list[Stratum]:
        """One stratum per dimension: population weights = difficulty weights, labelled weights ÷ π."""
        out = []
        for dimension in sorted(set(self.dimension.tolist())):
            mine = self.dimension == dimension
            lab = mine & self.labelled
            y, yhat = self.expert[lab], self.judge[lab]
            if residual:  # the shift: the mean of Y − Ŷ, a classical (λ = 0) estimate on the residuals
                y, yhat = y - yhat, np.zeros_like(yhat)
            out.append(Stratum(
                key=str(dimension), Y=y, Yhat=yhat,
                Yhat_unlabeled=np.zeros(int(mine.sum())) if residual else self.judge[mine],
                size=float(self.weight[mine].sum()),
                w=self.weight[lab] / self.probability[lab] if lab.any() else None,
                w_unlabeled=self.weight[mine],
            ))
        return out


def _stratified(group: _Group, options: Options, *, residual: bool = False) -> StratifiedEstimate | None:
    if not group.judge.size:
        return None
    # t quantiles (Welch–Satterthwaite degrees of freedom across strata): a cell of a handful of expert labels gets
    # the wide interval it deserves, not a normal one on a standard error that two labels cannot estimate
    return ppi_stratified_mean(group.strata(residual=residual), alpha=options.alpha,
                               lam=0.0 if residual else None, small_sample=True)


def _estimate(result: StratifiedEstimate | None) -> Estimate:
    if result is None:
        return Estimate(estimate=None, lower=None, upper=None, se=None, lam=None, n=0, covered_weight=0.0, skipped=[])
    lams = [s.lam for s in result.strata if s.lam is not None]
    return Estimate(
        estimate=_r(result.estimate), lower=_r(result.lower), upper=_r(result.upper), se=_r(result.se),
        lam=_r(float(np.mean(lams))) if lams else None,
        lam_by_stratum={s.key: _r(s.lam) for s in result.strata if s.lam is not None},
        n=int(sum(s.n for s in result.strata if s.skipped is None)),
        covered_weight=_r(result.covered_weight, 4),
        skipped=[Skipped(stratum=s.key, n=s.n, reason=s.skipped) for s in result.strata if s.skipped],
    )


def _judge_only(group: _Group, options: Options, name: str) -> Span:
    if not group.judge.size:
        return _span(None, None, None, n=0)
    if options.n_resamples == 0:  # intervals turned off
        return _span(weighted_mean(group.judge, group.weight), None, None, n=int(group.judge.size))
    low, high = bootstrap_weighted_mean_ci(group.judge, group.weight, group.dimension.astype(str),
                                           n_resamples=options.n_resamples, confidence=1 - options.alpha,
                                           seed=named_seed(options.seed, name))
    return _span(weighted_mean(group.judge, group.weight), low, high, n=int(group.judge.size))


def _judge_only_with_dimensions(group: _Group, options: Options, name: str) -> tuple[Span, dict[str, Span]]:
    """The model's judge-only score and each dimension's, from one set of stratified resamples."""
    dimensions = sorted(set(group.dimension.tolist()))
    if not group.judge.size or options.n_resamples == 0:
        cells = {}
        for dimension in dimensions:
            mine = group.dimension == dimension
            cells[str(dimension)] = _span(weighted_mean(group.judge[mine], group.weight[mine]), None, None,
                                          n=int(mine.sum()))
        return _judge_only(group, options, name), cells
    (low, high), per = bootstrap_weighted_mean_ci_with_strata(
        group.judge, group.weight, group.dimension.astype(str), n_resamples=options.n_resamples,
        confidence=1 - options.alpha, seed=named_seed(options.seed, name))
    cells = {}
    for dimension in dimensions:
        mine = group.dimension == dimension
        cells[str(dimension)] = _span(weighted_mean(group.judge[mine], group.weight[mine]), *per[str(dimension)],
                                      n=int(mine.sum()))
    return _span(weighted_mean(group.judge, group.weight), low, high, n=int(group.judge.size)), cells


@dataclass(frozen=True)
class Plan:
    """What the planning function needs of a cell: the residual and judge variances, λ, N judged and n labelled
    (the variances and λ are None with fewer than two usable labels)."""

    residual_var: float | None
    judge_var: float | None
    lam: float | None
    N: int  # noqa: N815 - the methodology's name for the judged responses
    n: int


def _planning(group: _Group, result: StratifiedEstimate | None) -> Plan:
    """The variances the planning function needs, pooled over the group's usable labels."""
    lab = group.labelled
    if result is None or result.estimate is None or lab.sum() < 2:
        return Plan(residual_var=None, judge_var=None, lam=None, N=int(group.judge.size), n=int(lab.sum()))
    lams = [s.lam for s in result.strata if s.lam is not None]
    lam = float(np.mean(lams)) if lams else 1.0
    w = group.weight[lab] / group.probability[lab]
    w = w / w.sum() * lab.sum()
    residual = w * (group.expert[lab] - lam * group.judge[lab])
    wu = group.weight / group.weight.sum() * group.judge.size
    return Plan(residual_var=float(residual.var()), judge_var=float((wu * group.judge).var()), lam=lam,
                N=int(group.judge.size), n=int(lab.sum()))


def _more_labels(plan: Plan, target: float, alpha: float) -> int | None:
    if plan.residual_var is None or plan.judge_var is None or plan.lam is None:
        return None
    needed = labels_needed(residual_var=plan.residual_var, judge_var=plan.judge_var, N=plan.N,
                           lam=plan.lam, target_half_width=target, alpha=alpha)
    return None if needed is None else max(0, needed - plan.n)


def _se_after(plan: Plan, more: int) -> float:
    assert plan.residual_var is not None and plan.judge_var is not None and plan.lam is not None
    return math.sqrt(plan.residual_var / (plan.n + more) + plan.lam ** 2 * plan.judge_var / plan.N)


def _to_separate(a: Plan, b: Plan, gap: float, z: float, limit: int = 100_000) -> int | None:
    """More labels per model (the same number for both) for the pair's simultaneous interval to clear zero."""
    if a.residual_var is None or b.residual_var is None or gap == 0:
        return None
    if z * math.hypot(_se_after(a, limit), _se_after(b, limit)) >= abs(gap):
        return None
    low, high = 0, limit
    while low < high:
        mid = (low + high) // 2
        if z * math.hypot(_se_after(a, mid), _se_after(b, mid)) < abs(gap):
            high = mid
        else:
            low = mid + 1
    return low


def _evidence_note(plan: Plan, more: int | None) -> str:
    """Why the evidence meter shows no number: no usable labels yet, or a target more expert labels cannot reach."""
    if more is not None:
        return ""
    if plan.residual_var is None:
        return "fewer than 2 usable expert labels: nothing to plan from yet"
    return ("not reachable by expert labels alone: the judged responses' own sampling error is already wider "
            "than the target (judge more responses)")


def _hours(items: int | None, options: Options, raters: float) -> float | None:
    if items is None or options.seconds_per_item is None:
        return None
    return round(items * raters * options.seconds_per_item / 3600, 1)


def _as_estimate(result: StratifiedEstimate) -> MeanEstimate:
    assert result.estimate is not None and result.se is not None and result.lower is not None
    assert result.upper is not None
    n = sum(s.n for s in result.strata if s.skipped is None)
    big_n = sum(s.N for s in result.strata if s.skipped is None)
    return MeanEstimate(result.estimate, result.se, result.lower, result.upper, math.nan, n, big_n)


def _statements(candidates: list[tuple[str, str, Estimate]], alpha: float) -> list[str]:
    """Plain words for every shift clear of zero after a Bonferroni correction over all the cells looked at (a
    page of 50 cells would otherwise show two or three chance 'biases' at 95 %), on cells of at least
    MIN_LABELS_FOR_WORDS expert labels; the interval printed is that simultaneous one."""
    tested = [(m, f, s) for m, f, s in candidates if s.estimate is not None and s.se is not None
              and s.n >= MIN_LABELS_FOR_WORDS]
    if not tested:
        return []
    z = float(norm.ppf(1 - alpha / (2 * len(tested))))
    out = []
    for model, facet, shift in tested:
        estimate, se = shift.estimate, shift.se
        assert estimate is not None and se is not None
        if estimate == 0 or abs(estimate) <= z * se:
            continue
        verb = "under-scores" if estimate > 0 else "over-scores"
        where = "" if facet == "overall" else f" on {facet}"
        low, high = sorted((abs(estimate - z * se), abs(estimate + z * se)))
        out.append(f"The judge {verb} {model}{where} by {abs(estimate):.3f} ({low:.3f}–{high:.3f}, simultaneous "
                   f"{1 - alpha:.0%} over {len(tested)} cells) of composite against the experts.")
    return out


def _excluded(labelled: list[InputRow]) -> dict[str, int]:
    """Expert-labelled rows the estimate cannot use, counted by why."""
    excluded: dict[str, int] = defaultdict(int)
    for r in labelled:
        if r.judge is None:
            excluded["not_scored_by_the_judge"] += 1
        elif r.inclusion_basis not in USABLE_BASES or not r.inclusion_probability:
            excluded["unknown_inclusion_probability"] += 1
    return excluded


def _warnings(labelled: list[InputRow], excluded: dict[str, int]) -> list[str]:
    """What the board says above its tables: edge cases, labels left out, no labels at all."""
    warnings: list[str] = []
    edge_cases = sum(1 for r in labelled if r.judge is not None and r.inclusion_basis == "edge_case")
    if edge_cases:
        warnings.append(f"{edge_cases} expert-labelled edge case(s) were picked on purpose, not drawn at random: they "
                        "count as their own take-all stratum (inclusion probability 1 given the pick), so the "
                        "rest of the draw still stands for the responses that were not picked.")
    if excluded["unknown_inclusion_probability"]:
        warnings.append(f"{excluded['unknown_inclusion_probability']} expert-labelled item(s) come from a draw whose "
                        "inclusion probabilities could not be recovered: they are left out.")
    if excluded["not_scored_by_the_judge"]:
        warnings.append(f"{excluded['not_scored_by_the_judge']} expert-labelled response(s) were not scored by this "
                        "judge run (failed or not judged): they are outside the leaderboard's population.")
    if not labelled:
        warnings.append("No expert-labelled response in this cycle yet: every calibrated score is missing.")
    return warnings


@dataclass
class _ModelBoard:
    """One model's entry, with what the rank sets and the statements need of it."""

    entry: ModelEntry
    plan: Plan
    calibrated: StratifiedEstimate | None  # its PPI++ overall estimate (None: no usable expert label)
    candidates: list[tuple[str, str, Estimate]]  # (model, facet, shift) cells that may be put into words


def _cell(group: _Group, options: Options, raters: float, judge_only: Span) -> Cell:
    """One model's cell in one dimension or tradition: calibrated (PPI++), shift and the evidence meter."""
    calibrated = _stratified(group, options)
    plan = _planning(group, calibrated)
    more = _more_labels(plan, options.target_half_width, options.alpha)
    return Cell(judge_only=judge_only, calibrated=_estimate(calibrated),
                shift=_estimate(_stratified(group, options, residual=True)),
                evidence=Evidence(more_labels=more, expert_hours=_hours(more, options, raters),
                                  note=_evidence_note(plan, more)))


def _cells(model: str, mine: list[InputRow], options: Options, raters: float,
           judge_by_dimension: dict[str, Span]) -> tuple[dict[str, Cell], dict[str, Cell]]:
    """(by dimension, by tradition): every cell of one model, each facet's values in sorted order."""
    by_dimension, by_tradition = {}, {}
    for value in sorted({r.dimension for r in mine}):
        group = _Group.of([r for r in mine if r.dimension == value], "panel")
        by_dimension[value] = _cell(group, options, raters, judge_by_dimension[value])
    for value in sorted({r.tradition for r in mine}):
        group = _Group.of([r for r in mine if r.tradition == value], "panel")
        judge_only = _judge_only(group, options, f"judge:{model}:tradition:{value}")
        by_tradition[value] = _cell(group, options, raters, judge_only)
    return by_dimension, by_tradition


def _model_board(model: str, mine: list[InputRow], options: Options) -> _ModelBoard:
    """One model overall (judge-only, calibrated, shift, gold-only, meter) and its cells."""
    group = _Group.of(mine, "panel")
    calibrated = _stratified(group, options)
    plan = _planning(group, calibrated)
    judge_overall, judge_by_dimension = _judge_only_with_dimensions(group, options, f"judge:{model}:overall")
    more = _more_labels(plan, options.target_half_width, options.alpha)
    raters = float(np.median([r.n_raters for r in mine if r.expert is not None] or [0])) or 1.0
    by_dimension, by_tradition = _cells(model, mine, options, raters, judge_by_dimension)
    entry = ModelEntry(
        model=model, family=mine[0].family, judged=int(group.judge.size),
        not_scored=sum(1 for r in mine if r.judge is None),
        self_preference=mine[0].family in set(options.judge_families),
        judge_only=judge_overall,
        calibrated=_estimate(calibrated),
        shift=_estimate(_stratified(group, options, residual=True)),
        gold_only=_estimate(_stratified(_Group.of(mine, "gold"), options)),
        evidence=Evidence(more_labels=more, expert_hours=_hours(more, options, raters),
                          note=_evidence_note(plan, more),
                          raters_per_item=raters, target_half_width=options.target_half_width),
        by_dimension=by_dimension, by_tradition=by_tradition,
    )
    if calibrated is None or calibrated.estimate is None:
        entry.calibrated.note = "No expert-labelled response of this model can be used: no calibrated score."
        calibrated = None
    candidates = [(model, "overall", entry.shift), *((model, key, cell.shift) for key, cell in by_dimension.items())]
    return _ModelBoard(entry=entry, plan=plan, calibrated=calibrated, candidates=candidates)


@dataclass
class _Ranking:
    """Rank sets and pairs: the pairwise intervals and how many models are clearly above and below each."""

    pairs: list[Pair]
    above: dict[str, int]
    below: dict[str, int]
    count: int


def _pair(a: str, b: str, diff: Difference, boards: dict[str, _ModelBoard], ranked: list[str], z: float,
          raters: float, options: Options) -> Pair:
    """Two models' calibrated difference with its simultaneous interval and the labels each needs to separate."""
    separated = diff.lower > 0 or diff.upper < 0
    more = None if separated else _to_separate(boards[a].plan, boards[b].plan, diff.estimate, z)
    return Pair(
        model_a=a, model_b=b, adjacent=ranked.index(b) == ranked.index(a) + 1, separated=separated,
        estimate=_r(diff.estimate), lower=_r(diff.lower), upper=_r(diff.upper), more_labels_each=more,
        expert_hours=_hours(None if more is None else 2 * more, options, raters),
    )


def _ranking(boards: dict[str, _ModelBoard], labelled: list[InputRow], options: Options) -> _Ranking:
    """Bonferroni-simultaneous intervals on every pairwise difference of calibrated scores, and the rank counts."""
    estimates = {m: b.calibrated for m, b in boards.items() if b.calibrated is not None}
    ranked = sorted(estimates, key=lambda m: (-(estimates[m].estimate or 0.0), m))
    pairs = list(combinations(ranked, 2))
    simultaneous = options.alpha / len(pairs) if pairs else options.alpha
    z = float(norm.ppf(1 - simultaneous / 2))
    raters = 1.0 if not labelled else float(np.median([r.n_raters for r in labelled]))
    above: dict[str, int] = defaultdict(int)
    below: dict[str, int] = defaultdict(int)
    pairs_out = []
    for a, b in pairs:
        diff = mean_difference(_as_estimate(estimates[a]), _as_estimate(estimates[b]), alpha=simultaneous)
        if diff.lower > 0:
            above[b] += 1
            below[a] += 1
        elif diff.upper < 0:
            above[a] += 1
            below[b] += 1
        pairs_out.append(_pair(a, b, diff, boards, ranked, z, raters, options))
    return _Ranking(pairs=pairs_out, above=above, below=below, count=len(ranked))


def _meta(options: Options, n_pairs: int) -> CalibratedMeta:
    alpha = options.alpha
    return CalibratedMeta(
        alpha=alpha, confidence=1 - alpha, seed=options.seed, n_resamples=options.n_resamples,
        target_half_width=options.target_half_width, seconds_per_item=options.seconds_per_item,
        judge_families=sorted(set(options.judge_families)),
        truth="per response and sub-dimension: the adjudicated gold score where there is one, else the mean "
                 "of the panel's submitted scores; composite Σ score/3 × weight/100 (methodology §5.4.1)",
        estimator="PPI++ (power-tuned λ in [0, 1]), stratified by dimension, difficulty-weighted "
                  "(§5.4.2), labelled responses weighted by 1 / inclusion probability; normal intervals",
        judge_only="difficulty-weighted mean of the judge's composites, stratified percentile bootstrap",
        rank_method=f"Bonferroni-simultaneous {1 - alpha:.0%} normal intervals on all {n_pairs} pairwise "
                    "differences of calibrated scores; a model's rank set runs from 1 + the models clearly "
                    "above it to K − the models clearly below it",
    )


def _counts(rows: list[InputRow], labelled: list[InputRow], excluded: dict[str, int]) -> Counts:
    return Counts(
        judged=sum(1 for r in rows if r.judge is not None), responses=len(rows),
        expert_labelled=len(labelled),
        used=sum(1 for r in labelled if r.judge is not None and r.inclusion_basis in USABLE_BASES
                 and r.inclusion_probability),
        excluded={k: v for k, v in sorted(excluded.items()) if v},
    )


def calibrated_leaderboard_build(rows: Iterable[InputRow], options: Options) -> CalibratedReport:
    """The calibrated leaderboard tree (deterministic for the same rows and options; `to_json()` is its JSON)."""
    rows = sorted(rows, key=lambda r: r.response_id)
    by_model: dict[str, list[InputRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    labelled = [r for r in rows if r.expert is not None]
    excluded = _excluded(labelled)
    boards = {model: _model_board(model, by_model[model], options) for model in sorted(by_model)}
    ranking = _ranking(boards, labelled, options)
    for model, board in boards.items():
        board.entry.rank_set = ([1 + ranking.above[model], ranking.count - ranking.below[model]]
                                if board.calibrated is not None else None)
    models = sorted((b.entry for b in boards.values()),
                    key=lambda e: (e.calibrated.estimate is None, -(e.calibrated.estimate or 0.0), e.model))
    return CalibratedReport(
        schema=SCHEMA_VERSION, meta=_meta(options, len(ranking.pairs)),
        counts=_counts(rows, labelled, excluded), warnings=_warnings(labelled, excluded),
        statements=_statements([c for b in boards.values() for c in b.candidates], options.alpha),
        models=models, pairs=ranking.pairs,
    )
