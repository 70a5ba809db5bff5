"""Leaderboard arithmetic over judged items — pure Python/numpy/scipy, no database.

Per case (methodology §5.4.1): the composite Σ raw/3 × weight/100 over a dimension's sub-dimensions
(:func:`case_composite`; the judge pipeline stores it, the Delphi re-scoring and expert truth use it too).

Per model (methodology §5.4.2, §5.7): score = Σ w_d × composite / Σ w_d over the model's scored items,
w_d the difficulty weight (Easy 1.0, Medium 1.5, Hard 2.0, Expert 3.0); the same per dimension and per
tradition; a 95 % percentile bootstrap interval (1,000 resamples, seeded) stratified by dimension;
failure rate = excluded items / finished items. Self-preference (§5.3.2): when a model's item has a
secondary-judge result, the leaderboard uses it, and the primary judge's score is shown beside it.

Pairwise (§5.7.3): for every pair of models, the per-case composites on the cases both have scored
(a model's responses to one case averaged) are compared with a paired t-test (scipy.stats.ttest_rel);
p-values are reported uncorrected and Bonferroni-corrected (× number of pairs, capped at 1), with
Cohen's d for paired samples, d = mean(a − b) / sd(a − b) (ddof = 1; Cohen 1988, "d_z").

Thin evidence (issue 32, `evaluations.judge.guardrails`): with `min_cases` = m, a model with fewer than m scored cases is
listed but not ranked; a run in which no model reaches m is a *trial* (nothing ranked); a score interval from fewer
than m items is not computed (the page says why in words); Cohen's d needs m pairs, and a comparison on fewer
pairs is never called significant.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import combinations

import numpy as np

from stats.means import bootstrap_weighted_mean_ci, weighted_mean

from .guardrails import MIN_CASES_DEFAULT, evidence_enough, run_is_trial, thin_words

NO_TRADITION = "none"


def case_composite(*, raw_scores: Mapping[str, int], sub_weights: Mapping[str, Decimal]) -> Decimal:
    """Methodology §5.4.1: Σ raw/3 × weight/100 over a dimension's sub-dimensions, a number in [0, 1]."""
    missing = set(sub_weights) - set(raw_scores)
    if missing:
        raise ValueError(f"missing scores for {', '.join(sorted(missing))}")
    total = sum(Decimal(raw_scores[key]) / 3 * weight / 100 for key, weight in sub_weights.items())
    return Decimal(total)


@dataclass(frozen=True)
class LeaderboardItem:
    """One judged response: its case facets and the composites that count."""

    model: str
    family: str
    case_id: int
    dimension: str
    difficulty_weight: float
    tradition: str  # tradition key, or NO_TRADITION
    scored: bool  # the decisive result (secondary, else fallback, else primary) is scored
    composite: float | None  # decisive composite
    primary_composite: float | None  # primary judge's composite (fallback's when the primary failed)
    self_preference: bool  # a secondary judge scored this item too


@dataclass(frozen=True)
class LeaderboardColumns:
    """The same items as parallel arrays, one entry per item in a fixed order (the database path builds these).

    Text facets are object arrays of str; a missing composite is NaN.
    """

    model: np.ndarray
    family: np.ndarray
    case_id: np.ndarray
    dimension: np.ndarray
    difficulty_weight: np.ndarray
    tradition: np.ndarray
    scored: np.ndarray
    composite: np.ndarray
    primary_composite: np.ndarray
    self_preference: np.ndarray

    @property
    def usable(self) -> np.ndarray:
        """Items that count: scored, with a composite."""
        return self.scored & ~np.isnan(self.composite)

    @classmethod
    def from_items(cls, items: Sequence[LeaderboardItem]) -> LeaderboardColumns:
        def text(values: list[str]) -> np.ndarray:
            return np.array(values, dtype=object)

        def number(values: list[float | None]) -> np.ndarray:
            return np.array([math.nan if v is None else v for v in values], dtype=float)

        return cls(
            model=text([i.model for i in items]), family=text([i.family for i in items]),
            case_id=np.array([i.case_id for i in items], dtype=np.int64),
            dimension=text([i.dimension for i in items]),
            difficulty_weight=np.array([i.difficulty_weight for i in items], dtype=float),
            tradition=text([i.tradition for i in items]),
            scored=np.array([i.scored for i in items], dtype=bool),
            composite=number([i.composite for i in items]),
            primary_composite=number([i.primary_composite for i in items]),
            self_preference=np.array([i.self_preference for i in items], dtype=bool),
        )


@dataclass
class Score:
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    thin: bool = False  # fewer items than an interval needs: no interval (see `thin_words`)


@dataclass
class ModelRow:
    model: str
    family: str
    items: int
    scored: int
    excluded: int
    failure_rate: float
    overall: Score
    primary_judge_score: float | None
    self_preference: bool
    by_dimension: dict[str, Score] = field(default_factory=dict)
    by_tradition: dict[str, Score] = field(default_factory=dict)
    tie_group: int = 0  # 1, 2, …: models in one group are not ranked against each other (their intervals overlap)
    cases: int = 0  # distinct cases with a scored item: what the thin-evidence rule counts
    ranked: bool = True  # False below the minimum of cases (listed, never ranked)


@dataclass
class Comparison:
    model_a: str
    model_b: str
    n_common: int
    mean_difference: float | None
    t_statistic: float | None
    p_value: float | None
    p_bonferroni: float | None
    cohens_d: float | None
    significant: bool
    thin: bool = False  # fewer pairs than an effect size needs: no d, never significant


@dataclass
class Leaderboard:
    models: list[ModelRow]
    comparisons: list[Comparison]
    n_resamples: int
    confidence: float
    seed: int
    min_cases: int = MIN_CASES_DEFAULT
    trial: bool = False  # no model reaches min_cases: a trial run — listed, never the default, never ranked

    def thin_words(self, n: int | None, what: str = "an interval") -> str:
        """The words shown instead of a number thin evidence cannot support."""
        return thin_words(n, minimum=self.min_cases, what=what)


def tie_groups_assign(rows: list[ModelRow]) -> None:
    """Number the models (sorted best first) into tie groups: a model joins the group of the best model above it
    whose intervals overlap the group leader's. Models without an interval form a group each; unscored ones and
    unranked ones (below the minimum of cases) get 0."""
    group, leader = 0, None
    for row in rows:
        score = row.overall
        if score.score is None or not row.ranked:
            row.tie_group = 0
            continue
        overlaps = (leader is not None and score.ci_high is not None and leader.ci_low is not None
                    and score.ci_high >= leader.ci_low)
        if not overlaps:
            group, leader = group + 1, score
        row.tie_group = group


def _clean(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _score(columns: LeaderboardColumns, rows: np.ndarray, *, n_resamples: int, confidence: float,
           seed: int, min_cases: int = MIN_CASES_DEFAULT) -> Score:
    """Weighted mean and bootstrap interval of the scored items among `rows` (indices, in item order); no interval
    from fewer than `min_cases` items (`thin`)."""
    rows = rows[columns.usable[rows]]
    if not rows.size:
        return Score(None, None, None, 0)
    values = columns.composite[rows]
    weights = columns.difficulty_weight[rows]
    if not evidence_enough(int(rows.size), minimum=min_cases):
        return Score(_clean(weighted_mean(values, weights)), None, None, int(rows.size), thin=True)
    low, high = bootstrap_weighted_mean_ci(values, weights, columns.dimension[rows], n_resamples=n_resamples,
                                           confidence=confidence, seed=seed)
    return Score(_clean(weighted_mean(values, weights)), _clean(low), _clean(high), int(rows.size))


def paired_comparison(a: list[float], b: list[float]) -> tuple[float | None, float | None, float | None, float | None]:
    """(mean difference, t, p, Cohen's d_z) of paired samples; None where undefined (n < 2, zero spread)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) < 2:
        return (float(np.mean(np.subtract(a, b))) if a else None), None, None, None
    diff = np.subtract(a, b, dtype=float)
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1))
    if sd == 0:
        return mean, None, None, None
    from scipy import stats as scipy_stats  # ~1 s to import: not at start-up (the admin imports this module)

    result = scipy_stats.ttest_rel(a, b)
    return mean, float(result.statistic), float(result.pvalue), mean / sd


def leaderboard_compute(
    items: list[LeaderboardItem], *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
    alpha: float = 0.05, min_cases: int = MIN_CASES_DEFAULT,
) -> Leaderboard:
    """Model rows (sorted by score, best first) and Bonferroni-corrected pairwise comparisons."""
    return leaderboard_compute_columns(LeaderboardColumns.from_items(items), n_resamples=n_resamples,
                                       confidence=confidence, seed=seed, alpha=alpha, min_cases=min_cases)


def cases_per_model(columns: LeaderboardColumns) -> dict[str, int]:
    """Per model, the number of distinct cases with a scored item (what the thin-evidence rule counts)."""
    usable = columns.usable
    counts: dict[str, set[int]] = {str(m): set() for m in columns.model.tolist()}
    for model, case in zip(columns.model[usable].tolist(), columns.case_id[usable].tolist(), strict=True):
        counts[str(model)].add(int(case))
    return {model: len(cases) for model, cases in counts.items()}


def columns_are_trial(columns: LeaderboardColumns, *, min_cases: int = MIN_CASES_DEFAULT) -> bool:
    """The run these columns hold is a trial: no model has `min_cases` scored cases."""
    return run_is_trial(cases_per_model(columns), minimum=min_cases)


def leaderboard_compute_columns(
    columns: LeaderboardColumns, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
    alpha: float = 0.05, min_cases: int = MIN_CASES_DEFAULT,
) -> Leaderboard:
    """`leaderboard_compute` over columns: models in order of their first item, groups as index arrays."""
    names, first, model_of = np.unique(columns.model, return_index=True, return_inverse=True)
    case_counts = cases_per_model(columns)
    trial = run_is_trial(case_counts, minimum=min_cases)

    def score(rows: np.ndarray) -> Score:
        return _score(columns, rows, n_resamples=n_resamples, confidence=confidence, seed=seed, min_cases=min_cases)

    rows = []
    per_case: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for code in np.argsort(first, kind="stable"):
        model = str(names[code])
        mine = np.flatnonzero(model_of == code)
        n_items, n_scored = int(mine.size), int(columns.scored[mine].sum())
        primary = mine[~np.isnan(columns.primary_composite[mine])]
        row = ModelRow(
            model=model, family=str(columns.family[mine[0]]), items=n_items, scored=n_scored,
            excluded=n_items - n_scored, failure_rate=(n_items - n_scored) / n_items,
            overall=score(mine),
            primary_judge_score=_clean(weighted_mean(columns.primary_composite[primary],
                                                     columns.difficulty_weight[primary])),
            self_preference=bool(columns.self_preference[mine].any()),
            cases=case_counts.get(model, 0),
            ranked=not trial and evidence_enough(case_counts.get(model, 0), minimum=min_cases),
        )
        for facet, target in ((columns.dimension, row.by_dimension), (columns.tradition, row.by_tradition)):
            for key in sorted(set(facet[mine].tolist())):
                target[key] = score(mine[facet[mine] == key])
        rows.append(row)
        # Per case, the mean composite of the model's scored responses to it (summed in item order).
        usable = mine[columns.usable[mine]]
        cases, which = np.unique(columns.case_id[usable], return_inverse=True)
        per_case[model] = (cases, np.bincount(which, weights=columns.composite[usable]) / np.bincount(which))
    rows.sort(key=lambda r: (r.overall.score is None, -(r.overall.score or 0), r.model))
    tie_groups_assign(rows)

    pairs = list(combinations([r.model for r in rows], 2))
    comparisons = []
    for model_a, model_b in pairs:
        (cases_a, means_a), (cases_b, means_b) = per_case[model_a], per_case[model_b]
        common = np.intersect1d(cases_a, cases_b, assume_unique=True)
        a = means_a[np.searchsorted(cases_a, common)].tolist()
        b = means_b[np.searchsorted(cases_b, common)].tolist()
        mean, t, p, d = paired_comparison(a, b)
        corrected = None if p is None else min(1.0, p * len(pairs))
        thin = not evidence_enough(int(common.size), minimum=min_cases)
        comparisons.append(Comparison(model_a, model_b, int(common.size), mean, t, p, corrected,
                                      None if thin else d, not thin and corrected is not None and corrected < alpha,
                                      thin=thin))
    return Leaderboard(rows, comparisons, n_resamples, confidence, seed, min_cases=min_cases, trial=trial)


# ----------------------------------------------------------------------------- conditions (issue 26)
# Under a generation condition with k repetitions, a model's score on a case is the mean composite of its scored
# repetitions of that case (repetitions are not independent cases: the bootstrap resamples cases, never
# repetitions). The leaderboard per condition is the ordinary leaderboard over those case means.
#
# A paired delta between conditions A and B for one model (§8.3 routes, §17.8 languages, §17.11 reasoning) is taken
# over the cases both have scored: d_c = case mean under A − case mean under B, and the delta is the difficulty-
# weighted mean Σ w_c d_c / Σ w_c (the same estimand as the difference of the two leaderboard scores on those
# cases). Its interval is the percentile case bootstrap of that weighted mean, stratified by dimension (as the
# leaderboard's); a delta whose interval covers 0 is "not distinguishable from zero". The paired t-test and
# Cohen's d_z of the unweighted d_c are reported beside it (`paired_comparison`).


def repetitions_collapse(columns: LeaderboardColumns) -> LeaderboardColumns:
    """One item per (model, case): the mean composite of its scored items (NaN when none is scored), scored when
    any is; the primary judge's composite likewise; self-preference when any item had a secondary judge."""
    if not columns.model.size:
        return columns
    keys = np.array([f"{m}\x1f{c}" for m, c in zip(columns.model, columns.case_id, strict=True)], dtype=object)
    _, first, group = np.unique(keys, return_index=True, return_inverse=True)
    n = first.size
    usable = columns.usable

    def group_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        total = np.bincount(group, weights=np.where(mask, values, 0.0), minlength=n)
        count = np.bincount(group, weights=mask.astype(float), minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    order = np.sort(first)  # groups in order of their first item
    position = np.empty(n, dtype=np.int64)
    position[np.argsort(first)] = np.arange(n)  # group code → its place in `order`

    def pick(values: np.ndarray) -> np.ndarray:
        out = np.empty(n, dtype=values.dtype)
        out[position] = values
        return out

    composite = pick(group_mean(columns.composite, usable))
    primary_ok = ~np.isnan(columns.primary_composite)
    primary = pick(group_mean(columns.primary_composite, primary_ok))
    scored = pick(np.bincount(group, weights=usable.astype(float), minlength=n) > 0)
    self_pref = pick(np.bincount(group, weights=columns.self_preference.astype(float), minlength=n) > 0)
    return LeaderboardColumns(
        model=columns.model[order], family=columns.family[order], case_id=columns.case_id[order],
        dimension=columns.dimension[order], difficulty_weight=columns.difficulty_weight[order],
        tradition=columns.tradition[order], scored=scored, composite=composite, primary_composite=primary,
        self_preference=self_pref,
    )


@dataclass
class ConditionDelta:
    """Condition `condition` minus `baseline` for one model, over the cases both scored."""

    model: str
    condition: str
    baseline: str
    axis: str  # what differs: reasoning, route, language, temperature, …
    n_cases: int
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    cohens_d: float | None
    thin: bool = False  # fewer common cases than the minimum: no interval, no d (issue 32)

    @property
    def distinguishable(self) -> bool:
        """The interval excludes 0 (a delta whose interval covers 0 is not distinguishable from zero)."""
        return (self.ci_low is not None and self.ci_high is not None
                and (self.ci_low > 0 or self.ci_high < 0))


def condition_delta(
    condition: LeaderboardColumns, baseline: LeaderboardColumns, *, model: str, names: tuple[str, str], axis: str,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0, min_cases: int = MIN_CASES_DEFAULT,
) -> ConditionDelta:
    """The paired delta of `model` between two conditions' collapsed columns (see the comment above); on fewer than
    `min_cases` common cases the delta alone, without interval or Cohen's d (`thin`)."""
    def cases(columns: LeaderboardColumns) -> dict[int, int]:
        rows = np.flatnonzero((columns.model == model) & columns.usable)
        return {int(columns.case_id[i]): int(i) for i in rows}

    a, b = cases(condition), cases(baseline)
    common = sorted(set(a) & set(b))
    if not common:
        return ConditionDelta(model, names[0], names[1], axis, 0, None, None, None, None, None)
    ia, ib = [a[c] for c in common], [b[c] for c in common]
    values_a, values_b = condition.composite[ia], baseline.composite[ib]
    diff = values_a - values_b
    weights = condition.difficulty_weight[ia]
    if not evidence_enough(len(common), minimum=min_cases):
        return ConditionDelta(model, names[0], names[1], axis, len(common), _clean(weighted_mean(diff, weights)),
                              None, None, None, None, thin=True)
    low, high = bootstrap_weighted_mean_ci(diff, weights, condition.dimension[ia], n_resamples=n_resamples,
                                           confidence=confidence, seed=seed)
    _, _, p, d = paired_comparison(values_a.tolist(), values_b.tolist())
    return ConditionDelta(model, names[0], names[1], axis, len(common), _clean(weighted_mean(diff, weights)),
                          _clean(low), _clean(high), p, d)
