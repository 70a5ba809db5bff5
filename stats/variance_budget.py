"""A variance budget for one model's score — pure numpy/scipy, no Django.

The score is the mean of a balanced table ``Y[c, p, r, j]``: cases c (n_c), provider routes p (n_p), generation
repetitions r (n_r, nested in case × route: repetition 1 of case 3 on route A has nothing to do with repetition 1 of
case 4), and judge runs j (n_j, crossed with everything: each judge run scores every response). With every factor
random (the cases are a sample of possible cases, the routes of possible routes, …) the model is

    y = μ + C + P + CP + R(CP) + J + CJ + PJ + CPJ + E,       E = R(CP)×J, one observation per cell,

and the variance of the grand mean is

    Var(ȳ) = σ²_C/n_c + σ²_P/n_p + σ²_CP/(n_c n_p) + σ²_R/(n_c n_p n_r)
           + σ²_J/n_j + σ²_CJ/(n_c n_j) + σ²_PJ/(n_p n_j) + σ²_CPJ/(n_c n_p n_j) + σ²_E/(n_c n_p n_r n_j).

Method: the ANOVA (method-of-moments) estimator of a balanced random-effects model — mean squares of every source,
their expected values by the Cornfield–Tukey rule (EMS(X) = Σ over components Y whose subscripts contain X's of
Π_{f ∉ Y} n_f · σ²_Y), solved for the σ² (Searle, Casella & McCulloch 1992, "Variance Components", §4.2–4.5 and
§5.2; the same table as Cornfield & Tukey 1956). Negative estimates are set to 0 (Searle et al. §4.4 "truncation"),
which makes the total slightly conservative. The total interval is ȳ ± t_ν · √V̂ with V̂ the sum of the truncated
components' terms above and ν its Satterthwaite (1946) degrees of freedom (V̂ is a linear combination Σ b_X MS_X of
mean squares, ν = V̂² / Σ (b_X MS_X)² / df_X). Miller 2024, "Adding error bars to evals" (arXiv:2411.00640) §3–4 makes
the point that the case-only standard error misses the variance of answers resampled for the same question and
of clustered designs; here routes and judge runs are *crossed* with cases, so a bootstrap over cases alone leaves
σ²_P/n_p and σ²_J/n_j out altogether — the cases-only interval returned beside the total shows by how much.

The budget groups the nine components by what one would change to shrink them:

- ``case``: σ²_C/n_c — more cases;
- ``route``: σ²_P/n_p + σ²_CP/(n_c n_p) — more provider routes (the route's effect and its case-by-case part);
- ``generation``: σ²_R/(n_c n_p n_r) — more repetitions;
- ``judge_run``: σ²_J/n_j + σ²_CJ/… + σ²_PJ/… + σ²_CPJ/… + σ²_E/… — more judge runs;
- ``judge_error``: the variance of the expert calibration's correction of the judge (an input, see below).

A factor with one level cannot be told apart from the level above it: with one repetition the generation term is
estimated inside ``route`` (or inside ``case`` when there is also one route); with one judge run the judge's
per-response noise is estimated inside ``generation`` (or lower); with one route, or one judge run, σ²_P or σ²_J is
not estimable at all — the component is reported as ``None`` with a note, never as 0.

Judge error. The expert-calibrated leaderboard (``stats/ppi.py``) estimates the experts' mean as
θ̂ = λ·mean(Ŷᵤ) + mean(Y − λŶ): the judge's mean plus a *rectifier* estimated on the expert-labelled sample. The
judge-error component is the variance of that rectifier, σ̂²_Δ/n (PPI++, Angelopoulos et al. 2023, arXiv 2311.01453
§2: the second term of the PPI variance), passed as ``judge_error_var``; its mean, the calibrated shift
θ̂ − λ·mean(Ŷᵤ), is ``judge_shift``. When given, the total interval is about ȳ + shift — the calibrated score of this
table — and the component is independent of the others (a different sample: the experts' labels).

Case weights (the leaderboard's difficulty weights) enter as y'_c = y_c · w_c · n_c / Σw, whose plain mean is the
weighted mean; the ANOVA then decomposes the weighted score.

Example:
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(30, 1, 2, 2)) + rng.normal(size=(30, 1, 1, 1))
    >>> b = variance_budget(y)
    >>> sorted(b.shares)
    ['case', 'generation', 'judge_error', 'judge_run', 'route']
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

AXES = ("c", "p", "r", "j")  # case, route, repetition (nested in c×p), judge run
GROUPS = ("case", "route", "generation", "judge_run", "judge_error")
GROUP_LABELS = {
    "case": "Case sampling",
    "route": "Provider route",
    "generation": "Generation run-to-run",
    "judge_run": "Judge run-to-run",
    "judge_error": "Judge error (calibration)",
}

# The nine variance components, by their subscripts (repetition implies case and route: it is nested in them).
COMPONENTS: tuple[frozenset[str], ...] = tuple(frozenset(s) for s in (
    "c", "p", "cp", "cpr", "j", "cj", "pj", "cpj", "cprj"))


def component_name(comp: frozenset[str]) -> str:
    """'CP', 'R(CP)', 'E' — the usual names of a component."""
    if comp == frozenset("cpr"):
        return "R(CP)"
    if comp == frozenset("cprj"):
        return "E"
    return "".join(a.upper() for a in AXES if a in comp)


def component_group(comp: frozenset[str]) -> str:
    """The budget line a component belongs to (see the module docstring)."""
    if "j" in comp:
        return "judge_run"
    if "r" in comp:
        return "generation"
    if "p" in comp:
        return "route"
    return "case"


@dataclass(frozen=True)
class Interval:
    """A two-sided interval about ``estimate``."""

    estimate: float
    se: float
    lower: float
    upper: float
    df: float


@dataclass(frozen=True)
class VarianceBudget:
    """One model's variance budget: the components, the groups' terms and shares, the total and cases-only intervals."""

    shape: tuple[int, int, int, int]  # n_c, n_p, n_r, n_j
    mean: float  # the table's mean (weighted when case weights were given)
    components: dict[str, float | None]  # σ̂² by component name, truncated at 0; None: not estimable
    terms: dict[str, float | None]  # each group's contribution to Var(score); None: not estimable
    shares: dict[str, float | None]  # terms / total
    total: Interval  # all estimable groups
    cases_only: Interval  # today's: case means resampled, routes and judge runs held fixed
    confidence: float
    notes: list[str] = field(default_factory=list)

    @property
    def width_ratio(self) -> float | None:
        """Total interval width ÷ cases-only width."""
        width = self.cases_only.upper - self.cases_only.lower
        return None if width <= 0 else (self.total.upper - self.total.lower) / width


def _marginal_means(y: np.ndarray) -> dict[tuple[int, ...], np.ndarray]:
    """The mean over every set of axes, keyed by the axes kept (kept axes keep their length, the others 1)."""
    return {kept: y.mean(axis=tuple(a for a in range(4) if a not in kept), keepdims=True)
            for size in range(5) for kept in itertools.combinations(range(4), size)}


def anova_sources(y: np.ndarray) -> dict[frozenset[str], tuple[float, int]]:
    """Sum of squares and degrees of freedom of every source of the nested design (crossed terms pooled into R(CP)
    and E), from the fully crossed decomposition: each term's effect is the inclusion–exclusion of marginal means."""
    n = y.shape
    total = int(np.prod(n))
    means = _marginal_means(y)
    out: dict[frozenset[str], tuple[float, int]] = {}
    for size in range(1, 5):
        for term in itertools.combinations(range(4), size):
            df = int(np.prod([n[a] - 1 for a in term]))
            if df == 0:
                continue
            eff = sum((-1) ** (size - k) * means[sub] for k in range(size + 1)
                      for sub in itertools.combinations(term, k))
            ss = float(total / np.prod([n[a] for a in term]) * np.sum(np.asarray(eff) ** 2))
            letters = {AXES[a] for a in term}
            if "r" in letters:  # nested in c × p: pool every term with r into R(CP) or E
                letters |= {"c", "p"}
            key = frozenset(letters)
            old_ss, old_df = out.get(key, (0.0, 0))
            out[key] = (old_ss + ss, old_df + df)
    return out


def _levels(comp: frozenset[str], n: dict[str, int], *, inside: bool) -> int:
    return int(np.prod([n[a] for a in AXES if (a in comp) == inside]))


def _checked_table(y: Sequence | np.ndarray, *, case_weights: Sequence[float] | np.ndarray | None,
                   judge_error_var: float | None, confidence: float) -> np.ndarray:
    """`y` as a float array after the input checks, its cases reweighted to mean weight 1 when weights are given."""
    arr = np.asarray(y, dtype=float)
    if arr.ndim != 4:
        raise ValueError(f"y: expected a 4-axis table (cases, routes, repetitions, judge runs), got {arr.ndim} axes")
    if arr.shape[0] < 2:
        raise ValueError(f"y: at least 2 cases are needed, got {arr.shape[0]}")
    if min(arr.shape) < 1:
        raise ValueError(f"y: every axis needs at least one level, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("y: every cell must be a finite score (the design must be balanced: drop incomplete cases)")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must be in (0, 1), got {confidence}")
    if judge_error_var is not None and not (math.isfinite(judge_error_var) and judge_error_var >= 0):
        raise ValueError(f"judge_error_var: must be a finite number ≥ 0, got {judge_error_var}")
    if case_weights is not None:
        w = np.asarray(case_weights, dtype=float)
        if w.shape != (arr.shape[0],) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"case_weights: expected {arr.shape[0]} positive finite weights")
        arr = arr * (w * arr.shape[0] / w.sum())[:, None, None, None]
    return arr


@dataclass(frozen=True)
class _AnovaFit:
    """The ANOVA estimates of the active components: mean squares, their df, the inverted EMS system, σ²."""

    n: dict[str, int]
    active: list[frozenset[str]]
    ms: np.ndarray
    dfs: np.ndarray
    inverse: np.ndarray
    positive: np.ndarray
    sigma: np.ndarray
    divisor: np.ndarray


def _anova_fit(arr: np.ndarray) -> _AnovaFit:
    """Solve the expected-mean-squares system for the components the table's shape can estimate."""
    n = dict(zip(AXES, arr.shape, strict=True))
    sources = anova_sources(arr)
    active = [c for c in COMPONENTS if c in sources]
    index = {c: i for i, c in enumerate(active)}
    ms = np.array([sources[c][0] / sources[c][1] for c in active])
    dfs = np.array([sources[c][1] for c in active], dtype=float)
    # EMS(X) = Σ_{Y ⊇ X, Y active} Π_{f ∉ Y} n_f σ²_Y — inactive components are absorbed by the active one with the
    # same coefficients (a factor at one level multiplies by 1).
    ems = np.zeros((len(active), len(active)))
    for x in active:
        for comp in active:
            if comp >= x:
                ems[index[x], index[comp]] = _levels(comp, n, inside=False)
    inverse = np.linalg.inv(ems)
    raw = inverse @ ms
    positive = raw > 0
    sigma = np.where(positive, raw, 0.0)
    divisor = np.array([_levels(c, n, inside=True) for c in active], dtype=float)
    return _AnovaFit(n=n, active=active, ms=ms, dfs=dfs, inverse=inverse, positive=positive, sigma=sigma,
                     divisor=divisor)


def _components_and_terms(fit: _AnovaFit) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """σ² by component name (None: not estimable) and each group's term σ²/divisor summed (None: no component)."""
    components: dict[str, float | None] = {component_name(c): None for c in COMPONENTS}
    terms: dict[str, float | None] = dict.fromkeys(GROUPS, None)
    for i, comp in enumerate(fit.active):
        components[component_name(comp)] = float(fit.sigma[i])
        group = component_group(comp)
        terms[group] = (terms[group] or 0.0) + float(fit.sigma[i] / fit.divisor[i])
    return components, terms


def _design_notes(n: dict[str, int]) -> list[str]:
    """What the table's shape cannot separate, in words."""
    notes: list[str] = []
    if n["p"] == 1:
        notes.append("one provider route: the route's variance is not estimable (the score is conditional on it)")
    if n["j"] == 1:
        notes.append("one judge run: judge run-to-run variance is not estimable; the judge's per-response noise is "
                     "counted under " + ("generation" if n["r"] > 1 else "route" if n["p"] > 1 else "case sampling"))
    if n["r"] == 1:
        notes.append("one repetition: generation run-to-run variance is not separable; it is counted under "
                     + ("route" if n["p"] > 1 else "case sampling"))
    return notes


def _total_interval(fit: _AnovaFit, *, mean: float, judge_error_var: float | None, judge_shift: float,
                    confidence: float) -> tuple[Interval, float]:
    """The interval of the mean over every source (Satterthwaite's df), and its total variance."""
    # Satterthwaite degrees of freedom of V̂ = b · MS (the truncated components only).
    b = (np.where(fit.positive, 1.0, 0.0) / fit.divisor) @ fit.inverse
    anova_var = float(b @ fit.ms)
    pieces = (b * fit.ms) ** 2 / fit.dfs
    df = float(anova_var ** 2 / pieces.sum()) if pieces.sum() > 0 else float(fit.n["c"] - 1)
    df = max(df, 1.0)
    total_var = anova_var + (judge_error_var or 0.0)
    if judge_error_var:
        # The judge-error piece is a normal-theory variance (PPI's), taken as known: ν stays the ANOVA part's,
        # scaled by Satterthwaite's rule with an infinite-df term.
        df = total_var ** 2 / (anova_var ** 2 / df) if anova_var > 0 else math.inf
    alpha = 1 - confidence
    centre = mean + (judge_shift if judge_error_var is not None else 0.0)
    se = math.sqrt(total_var)
    q = float(scipy_stats.t.ppf(1 - alpha / 2, df)) if math.isfinite(df) else float(scipy_stats.norm.ppf(1 - alpha / 2))
    return Interval(centre, se, centre - q * se, centre + q * se, df), total_var


def _cases_only_interval(arr: np.ndarray, *, mean: float, confidence: float) -> Interval:
    """The naive interval: case means as if they were the only source of variation."""
    n_c = arr.shape[0]
    alpha = 1 - confidence
    case_means = arr.mean(axis=(1, 2, 3))
    se_cases = float(case_means.std(ddof=1) / math.sqrt(n_c))
    q_cases = float(scipy_stats.t.ppf(1 - alpha / 2, n_c - 1))
    return Interval(mean, se_cases, mean - q_cases * se_cases, mean + q_cases * se_cases, float(n_c - 1))


def variance_budget(y: Sequence | np.ndarray, *, case_weights: Sequence[float] | np.ndarray | None = None,
                    judge_error_var: float | None = None, judge_shift: float = 0.0,
                    confidence: float = 0.95) -> VarianceBudget:
    """The variance budget of the mean of a balanced case × route × repetition × judge-run table (module docstring).

    ``y`` has shape (n_c, n_p, n_r, n_j), every cell finite; ``case_weights`` one positive weight per case.
    """
    arr = _checked_table(y, case_weights=case_weights, judge_error_var=judge_error_var, confidence=confidence)
    fit = _anova_fit(arr)
    n = fit.n
    components, terms = _components_and_terms(fit)
    notes = _design_notes(n)
    mean = float(arr.mean())
    if judge_error_var is not None:
        terms["judge_error"] = float(judge_error_var)
    else:
        notes.append("no expert calibration given: judge error is not in the total")
    total, total_var = _total_interval(fit, mean=mean, judge_error_var=judge_error_var, judge_shift=judge_shift,
                                       confidence=confidence)
    cases_only = _cases_only_interval(arr, mean=mean, confidence=confidence)
    shares: dict[str, float | None] = {
        g: (None if t is None else (t / total_var if total_var > 0 else 0.0)) for g, t in terms.items()}
    return VarianceBudget(shape=(n["c"], n["p"], n["r"], n["j"]), mean=mean, components=components, terms=terms,
                          shares=shares, total=total, cases_only=cases_only, confidence=confidence, notes=notes)


def simulate_table(rng: np.random.Generator, *, shape: tuple[int, int, int, int],
                   sd: dict[str, float], mu: float = 0.0) -> np.ndarray:
    """A table drawn from the random-effects model with the given standard deviations by component name ('C', 'P',
    'CP', 'R(CP)', 'J', 'CJ', 'PJ', 'CPJ', 'E'; missing ones 0) — for simulations with known truth."""
    n_c, n_p, n_r, n_j = shape
    y = np.full(shape, mu, dtype=float)
    for comp in COMPONENTS:
        s = sd.get(component_name(comp), 0.0)
        if s:
            size = [dim if AXES[a] in comp else 1 for a, dim in enumerate(shape)]
            y = y + rng.normal(0.0, s, size=size)
    return y


def true_terms(*, shape: tuple[int, int, int, int], sd: dict[str, float],
               judge_error_var: float = 0.0) -> dict[str, float]:
    """Each group's true contribution to Var(score) under ``simulate_table``'s model."""
    n = dict(zip(AXES, shape, strict=True))
    out = dict.fromkeys(GROUPS, 0.0)
    for comp in COMPONENTS:
        s = sd.get(component_name(comp), 0.0)
        out[component_group(comp)] += s ** 2 / _levels(comp, n, inside=True)
    out["judge_error"] = judge_error_var
    return out
