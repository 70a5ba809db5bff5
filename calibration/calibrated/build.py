"""The expert-calibrated leaderboard from plain rows — no database (the builder step of a snapshot).

One input row per judged response (`InputRow`; the snapshot's `inputs.csv` holds exactly these rows, so a
bundle recomputes byte for byte): its model and facets, the judge's decisive composite, and — for responses in
the calibration cycle — the experts' truth composite (`calibration.cycles.truth`), the gold-only truth
and the item's inclusion probability.

For every model, overall and per dimension and per tradition:
- **judge-only**: the difficulty-weighted mean of the judge's composites (methodology §5.4.2) with the
  leaderboard's stratified percentile bootstrap (§5.4, §5.7.1) — it covers the sampling of test cases only;
- **expert-calibrated**: an anytime-valid prediction-powered confidence sequence (`stats.anytime` through
  `sequences`, issue 31) on the cell's labels in the order the experts submitted them (`arrival`): the judge's
  weighted mean over every judged response plus the inverse-probability-weighted residual Y − λŶ, λ tuned on
  past labels only. Population weights are difficulty weights; a labelled response weighs difficulty weight /
  inclusion probability (edge cases, picked on purpose, are certain given the pick: probability 1). Valid at any
  number of labels and any look, inside the 0–1 scale; a dimension without a usable label is reported and left
  out (the estimate then covers a stated share of the model's weight); a cell with under 5 labels says so;
- **shift** = calibrated − judge-only, exactly (the judge's mean is known: the interval is the calibrated one moved).
Verdicts: every model's shift and every pair of models gets separated / equivalent within ±margin / continue,
read off the anytime sequences (valid under continuous monitoring), with the looks so far; pairs run on per-case
differences when both models' responses to the same cases were labelled. Rank sets: the same sequences at a
Bonferroni level over every pair. The evidence meter is a controller (`sequences.advice`): the lever that brings
a verdict (more labels, and where; or more experts per item when panel noise dominates) and the expected labels
to it (`stats.anytime.labels_to_verdict`); "enough" only once a verdict is reached.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from evaluations.judge.guardrails import evidence_enough, run_is_trial
from evaluations.labels import rubric_label, tradition_label
from evaluations.methodology import DIFFICULTY_WEIGHTS
from stats import anytime
from stats.bootstrap import named_seed
from stats.means import bootstrap_weighted_mean_ci, bootstrap_weighted_mean_ci_with_strata, weighted_mean

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
    TruthSensitivity,
)
from .sequences import (
    CellData,
    advice,
    as_estimate,
    difference,
    mean_estimate,
    panel_share,
    r6,
    shift_of,
    shift_verdict,
    step_sd,
    verdict_out,
)

USABLE_BASES = ("drawn", "carried", "recomputed", "cross", "edge_case")
DEFAULT_TARGET_HALF_WIDTH = 0.1
MIN_LABELS_FOR_WORDS = 10  # a shift is put into words only on at least this many expert labels
DEFAULT_MARGIN = 0.05
CONSTANT_JUDGE = ("the judge gave every response here the same score (constant judge): it carries no information, "
                  "so the calibrated score rests on the experts' labels alone")
SCHEMA_VERSION = 2  # 2: anytime-valid intervals, verdicts and lever advice (issue 31)


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
    # schema 2 (issue 31): the label's place in the order the experts submitted (1 = first; from the annotations'
    # submission times, so recomputing a version never resets the clock), the test case (pairs two models'
    # responses to the same case) and the variance of the panel's mean composite (panel noise; None: < 2 experts)
    arrival: int | None = None
    case: int | None = None
    panel_var: float | None = None
    # issue 34 §6: the severity-adjusted truth composite (calibration.cycles.fair_truth; None: not labelled, or its
    # panel's rater model could not be fitted — the report's meta.severity_notes say why)
    expert_fair: float | None = None
    # issue 35: the case's language (BCP 47 as stored; the language cells group by its primary subtag)
    language: str = "en"


@dataclass(frozen=True)
class Options:
    alpha: float = 0.05
    n_resamples: int = 1000
    seed: int = 0
    target_half_width: float = DEFAULT_TARGET_HALF_WIDTH
    seconds_per_item: float | None = None  # median active seconds per expert per item
    judge_families: tuple[str, ...] = ()  # the families of the run's judges (self-preference)
    margin: float = DEFAULT_MARGIN  # the verdicts' equivalence margin (composite points), set on the compute form
    horizon: int | None = None  # labels at which a sequence is narrowest; None: the draw's plan per cell (Σπ)
    # issue 34 §6: the panels whose rater model could not be fitted, in words; None: the severity-adjusted truth was
    # not computed (rows from an older inputs.csv), and the board has no block for it
    severity_notes: tuple[str, ...] | None = None
    # issue 32 (evaluations.judge.guardrails): a model with fewer judged responses than this is listed but never
    # ranked nor in a pair; a run where no model reaches it is a trial. 1 switches it off (versions stored before it)
    min_cases: int = 1


MIN_JUDGED_FOR_INTERVAL = 2  # a bootstrap of one judged response is that response: no interval (artefact checker)


def _span(estimate: float | None, lower: float | None, upper: float | None, *, n: int) -> Span:
    if n < MIN_JUDGED_FOR_INTERVAL:
        lower = upper = None
    # ends rounded outward, as the calibrated intervals are: a zero-width interval still holds its rounded estimate
    return Span(estimate=r6(estimate), lower=r6(lower, direction="down"), upper=r6(upper, direction="up"), n=n)


@dataclass
class _Group:
    """The rows of one (model, facet) cell as arrays."""

    judge: np.ndarray
    weight: np.ndarray
    dimension: np.ndarray
    labelled: np.ndarray  # bool: usable expert label
    expert: np.ndarray
    probability: np.ndarray
    arrival: np.ndarray  # float: arrival rank (inf: unknown, after every known one)
    response: np.ndarray
    case: np.ndarray  # int: test case id (−1 unknown)
    panel_var: np.ndarray  # float (NaN: not measured)

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
            arrival=np.array([math.inf if r.arrival is None else r.arrival for r in scored], dtype=float),
            response=np.array([r.response_id for r in scored], dtype=np.int64),
            case=np.array([-1 if r.case is None else r.case for r in scored], dtype=np.int64),
            panel_var=np.array([math.nan if r.panel_var is None else r.panel_var for r in scored], dtype=float),
        )

    def data(self) -> tuple[CellData, float, list[Skipped]]:
        """The cell's labels in arrival order (unknown arrival last, by response id) over its covered population:
        the dimensions with at least one usable label (a dimension never drawn has no label to stand for it).
        Returns (the data, the covered share of the difficulty weight, the dimensions left out)."""
        dims = sorted(set(self.dimension.tolist()))
        covered_dims = {d for d in dims if (self.labelled & (self.dimension == d)).any()} or set(dims)
        population = np.array([d in covered_dims for d in self.dimension.tolist()], dtype=bool)
        if not self.labelled.any():  # no label at all: the whole cell, and the sequence says "no labels"
            return (CellData(y=np.zeros(0), yhat=np.zeros(0), w=np.zeros(0), pi=np.zeros(0), case=np.zeros(0, np.int64),
                             arrival=np.zeros(0), panel_var=np.zeros(0), yhat_u=self.judge, w_u=self.weight,
                             case_u=self.case), 0.0, [])
        skipped = [Skipped(stratum=str(d), n=0, reason="no usable expert label in this dimension yet: its "
                           "responses are left out of the calibrated score") for d in dims if d not in covered_dims]
        total = float(self.weight.sum())
        covered = float(self.weight[population].sum()) / total if total > 0 else 0.0
        lab = np.flatnonzero(self.labelled)
        lab = lab[np.lexsort((self.response[lab], self.arrival[lab]))]
        data = CellData(y=self.expert[lab], yhat=self.judge[lab], w=self.weight[lab], pi=self.probability[lab],
                        case=self.case[lab], arrival=self.arrival[lab], panel_var=self.panel_var[lab],
                        yhat_u=self.judge[population], w_u=self.weight[population], case_u=self.case[population])
        return data, covered, skipped



def _anytime(group: _Group, options: Options) -> tuple[Estimate, CellData, int]:
    """The calibrated block of a cell: the anytime sequence over its labels in arrival order, its data and horizon
    (the options' or the draw's plan for the cell)."""
    data, covered, skipped = group.data()
    horizon = options.horizon or data.planned()
    if not group.judge.size:
        empty = Estimate(estimate=None, lower=None, upper=None, se=None, lam=None, n=0, covered_weight=0.0,
                         skipped=[], status="no_labels", words="no judged response in this cell")
        return empty, data, horizon
    block = as_estimate(mean_estimate(data, alpha=options.alpha, horizon=horizon), alpha=options.alpha,
                        covered=covered, skipped=skipped)
    if data.n and data.yhat_u.size and float(np.ptp(data.yhat_u)) == 0.0:
        block.words = "; ".join(w for w in (block.words, CONSTANT_JUDGE) if w)
    return block, data, horizon


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


def _hours(items: int | None, options: Options, raters: float) -> float | None:
    if items is None or options.seconds_per_item is None:
        return None
    return round(items * raters * options.seconds_per_item / 3600, 1)


@dataclass(frozen=True)
class _Candidate:
    """A cell whose shift may be put into words: its labels and the judge's mean over its covered population."""

    model: str
    facet: str
    shift: Estimate
    data: CellData
    horizon: int


def _statements(candidates: list[_Candidate], alpha: float) -> list[str]:
    """Plain words for every shift clear of zero at a Bonferroni-corrected level over all the cells looked at (a
    page of 50 cells would otherwise show two or three chance 'biases' at 95 %), on cells of at least
    MIN_LABELS_FOR_WORDS expert labels; the interval printed is that simultaneous anytime one."""
    tested = [c for c in candidates if c.shift.estimate is not None and c.shift.n >= MIN_LABELS_FOR_WORDS]
    if not tested:
        return []
    level = alpha / len(tested)
    out = []
    for c in tested:
        judge = c.data.judge_mean
        est = mean_estimate(c.data, alpha=level, horizon=c.horizon)
        if judge is None or est.estimate is None:
            continue
        low, high = est.lower - judge, est.upper - judge
        if low <= 0 <= high:
            continue
        estimate = est.estimate - judge
        verb = "under-scores" if estimate > 0 else "over-scores"
        where = "" if c.facet == "overall" else f" on {rubric_label(c.facet)}"  # a dimension: its label, not key
        low, high = sorted((abs(low), abs(high)))
        out.append(f"The judge {verb} {c.model}{where} by {abs(estimate):.3f} ({low:.3f}–{high:.3f}, simultaneous "
                   f"{1 - alpha:.0%} over {len(tested)} cells, valid at any number of labels) of composite "
                   "against the experts.")
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
    """One model's entry, with what the rank sets, the pairs and the statements need of it."""

    entry: ModelEntry
    data: CellData  # its labels in arrival order over its covered population
    calibrated: Estimate | None  # its overall calibrated block (None: no usable expert label)
    horizon: int
    candidates: list[_Candidate]
    where: list[str]  # the model's cells where a label helps most (the controller's "where")


def _where(cells: dict[str, Cell], facet: str, limit: int = 2) -> list[str]:
    """The cells where one more label narrows the model's interval most: the widest (None first), fewest labels."""
    def width(cell: Cell) -> float:
        c = cell.calibrated
        return math.inf if c.lower is None or c.upper is None else c.upper - c.lower
    ranked = sorted(cells.items(), key=lambda kv: (-width(kv[1]), kv[1].calibrated.n, kv[0]))
    label = rubric_label if facet == "dimension" else tradition_label  # words for a reader: labels, never keys
    return [f"{facet} {label(key)}" for key, _ in ranked[:limit]]


def _half_width(lower: float | None, upper: float | None) -> float | None:
    """Half the width of the interval a reader sees (the forecast starts from it)."""
    return None if lower is None or upper is None else (upper - lower) / 2


def _meter(calibrated: Estimate, shift: Estimate, data: CellData, options: Options, raters: float, horizon: int,
           where: list[str], **extra: float | None) -> Evidence:
    """The controller of one cell or model: the shift's verdict, the lever and the labels to a verdict."""
    verdict = shift_verdict(shift, alpha=options.alpha, margin=options.margin)
    lam = calibrated.lam or 0.0
    tip = advice(verdict, gap=shift.estimate, sd=step_sd(data, lam), n=shift.n, margin=options.margin,
                 alpha=options.alpha, horizon=horizon, share=panel_share(data, lam), where=where,
                 half_width=_half_width(shift.lower, shift.upper))
    more = tip.labels_to_verdict
    return Evidence(more_labels=more, expert_hours=_hours(more, options, raters),
                    note="" if more is not None else tip.words, verdict=verdict, advice=tip, **extra)


def _cell(group: _Group, options: Options, raters: float, judge_only: Span) -> tuple[Cell, CellData, int]:
    """One model's cell in one dimension or tradition: calibrated (anytime), shift = calibrated − judge, meter."""
    calibrated, data, horizon = _anytime(group, options)
    shift = shift_of(calibrated, data.judge_mean)
    return Cell(judge_only=judge_only, calibrated=calibrated, shift=shift,
                evidence=_meter(calibrated, shift, data, options, raters, horizon, [])), data, horizon


def _cells(model: str, mine: list[InputRow], options: Options, raters: float,
           judge_by_dimension: dict[str, Span]) -> tuple[dict[str, Cell], dict[str, Cell], list[_Candidate]]:
    """(by dimension, by tradition, the dimension cells' statement candidates): every cell of one model."""
    by_dimension, by_tradition, candidates = {}, {}, []
    for value in sorted({r.dimension for r in mine}):
        group = _Group.of([r for r in mine if r.dimension == value], "panel")
        by_dimension[value], data, horizon = _cell(group, options, raters, judge_by_dimension[value])
        candidates.append(_Candidate(model, value, by_dimension[value].shift, data, horizon))
    for value in sorted({r.tradition for r in mine}):
        group = _Group.of([r for r in mine if r.tradition == value], "panel")
        judge_only = _judge_only(group, options, f"judge:{model}:tradition:{value}")
        by_tradition[value], _, _ = _cell(group, options, raters, judge_only)
    return by_dimension, by_tradition, candidates


def _raters(mine: list[InputRow]) -> float:
    """The median number of experts per labelled response (1 without labels): the meter's hours multiply by it."""
    return float(np.median([r.n_raters for r in mine if r.expert is not None] or [0])) or 1.0


def primary_language(tag: str) -> str:
    """The language a cell groups by: a tag's primary subtag, lower case ("es-419" → "es"; empty → "en")."""
    return (tag or "en").split("-")[0].lower()


def _language_cells(model: str, mine: list[InputRow], options: Options) -> dict[str, Cell]:
    """Issue 35: one model's cell per case language, built like its tradition cells (judge-only with its own
    bootstrap stream, calibrated by the anytime sequence on that language's labels, the shift and the meter).
    Not in the statements or the meter's "where": those stay the dimension and tradition cells'."""
    raters = _raters(mine)
    cells = {}
    for value in sorted({primary_language(r.language) for r in mine}):
        group = _Group.of([r for r in mine if primary_language(r.language) == value], "panel")
        judge_only = _judge_only(group, options, f"judge:{model}:language:{value}")
        cells[value], _, _ = _cell(group, options, raters, judge_only)
    return cells


def _model_board(model: str, mine: list[InputRow], options: Options) -> _ModelBoard:
    """One model overall (judge-only, calibrated, shift, gold-only, meter) and its cells."""
    group = _Group.of(mine, "panel")
    calibrated, data, horizon = _anytime(group, options)
    judge_overall, judge_by_dimension = _judge_only_with_dimensions(group, options, f"judge:{model}:overall")
    raters = _raters(mine)
    by_dimension, by_tradition, candidates = _cells(model, mine, options, raters, judge_by_dimension)
    where = _where(by_dimension, "dimension") + _where(by_tradition, "tradition", 1)
    shift = shift_of(calibrated, data.judge_mean)
    gold, _, _ = _anytime(_Group.of(mine, "gold"), options)
    entry = ModelEntry(
        model=model, family=mine[0].family, judged=int(group.judge.size),
        not_scored=sum(1 for r in mine if r.judge is None),
        self_preference=mine[0].family in set(options.judge_families),
        judge_only=judge_overall, calibrated=calibrated, shift=shift, gold_only=gold,
        evidence=_meter(calibrated, shift, data, options, raters, horizon, where, raters_per_item=raters,
                        target_half_width=options.target_half_width),
        by_dimension=by_dimension, by_tradition=by_tradition,
    )
    usable = calibrated.estimate is not None
    if not usable:
        entry.calibrated.note = "No expert-labelled response of this model can be used: no calibrated score."
    candidates = [_Candidate(model, "overall", shift, data, horizon), *candidates]
    return _ModelBoard(entry=entry, data=data, calibrated=calibrated if usable else None, horizon=horizon,
                       candidates=candidates, where=where)


@dataclass
class _Ranking:
    """Rank sets and pairs: the pairwise intervals and how many models are clearly above and below each."""

    pairs: list[Pair]
    above: dict[str, int]
    below: dict[str, int]
    count: int
    ranked: set[str]  # models with a calibrated score on enough judged responses (the guardrail)


def _pair(a: str, b: str, boards: dict[str, _ModelBoard], ranked: list[str], simultaneous: float,
          raters: float, options: Options) -> Pair:
    """Two models' anytime difference: the Bonferroni-simultaneous interval for the rank sets, and at level α the
    live verdict with the controller's advice (paired per case where both models' same cases were labelled)."""
    da, db = boards[a].data, boards[b].data
    horizon = max(boards[a].horizon, boards[b].horizon)
    wide = difference(da, db, alpha=simultaneous, horizon=horizon)
    live = difference(da, db, alpha=options.alpha, horizon=horizon)
    verdict = verdict_out(anytime.pair_verdict(live, margin=options.margin), a=a, b=b)
    where = [f"models {a} and {b}" + (" (the same cases for both)" if live.paired else "")]
    tip = advice(verdict, gap=live.estimate, sd=live.sd, n=live.n, margin=options.margin, alpha=options.alpha,
                 horizon=horizon, share=_pair_share(boards[a], boards[b]), where=where,
                 half_width=_half_width(live.lower, live.upper))
    more = tip.labels_to_verdict
    separated = wide.status in ("ok", "few_labels") and (wide.lower > 0 or wide.upper < 0)
    has = wide.estimate is not None and wide.status in ("ok", "few_labels")
    return Pair(
        model_a=a, model_b=b, adjacent=ranked.index(b) == ranked.index(a) + 1, separated=separated,
        estimate=r6(wide.estimate) if has else None, lower=r6(wide.lower, direction="down") if has else None,
        upper=r6(wide.upper, direction="up") if has else None, more_labels_each=more,
        expert_hours=_hours(None if more is None else 2 * more, options, raters),
        paired=live.paired, verdict=verdict, advice=tip,
    )


def _pair_share(a: _ModelBoard, b: _ModelBoard) -> float | None:
    shares = [x.entry.evidence.advice.panel_share for x in (a, b) if x.entry.evidence.advice is not None]
    known = [s for s in shares if s is not None]
    return min(known) if len(known) == 2 else None


def _ranking(boards: dict[str, _ModelBoard], labelled: list[InputRow], options: Options) -> _Ranking:
    """Bonferroni-simultaneous anytime intervals on every pairwise difference of calibrated scores, the rank counts
    and every pair's live verdict."""
    estimates = {m: b.calibrated for m, b in boards.items()
                 if b.calibrated is not None and evidence_enough(b.entry.judged, minimum=options.min_cases)}
    ranked = sorted(estimates, key=lambda m: (-(estimates[m].estimate or 0.0), m))
    pairs = list(combinations(ranked, 2))
    simultaneous = options.alpha / len(pairs) if pairs else options.alpha
    raters = 1.0 if not labelled else float(np.median([r.n_raters for r in labelled]))
    above: dict[str, int] = defaultdict(int)
    below: dict[str, int] = defaultdict(int)
    pairs_out = []
    for a, b in pairs:
        pair = _pair(a, b, boards, ranked, simultaneous, raters, options)
        if pair.separated and pair.lower is not None and pair.lower > 0:
            above[b] += 1
            below[a] += 1
        elif pair.separated:
            above[a] += 1
            below[b] += 1
        pairs_out.append(pair)
    return _Ranking(pairs=pairs_out, above=above, below=below, count=len(ranked), ranked=set(ranked))


def _meta(options: Options, n_pairs: int) -> CalibratedMeta:
    alpha = options.alpha
    return CalibratedMeta(
        alpha=alpha, confidence=1 - alpha, seed=options.seed, n_resamples=options.n_resamples,
        target_half_width=options.target_half_width, seconds_per_item=options.seconds_per_item,
        judge_families=sorted(set(options.judge_families)),
        truth="per response and sub-dimension: the adjudicated gold score where there is one, else the mean "
                 "of the panel's submitted scores; composite Σ score/3 × weight/100 (methodology §5.4.1)",
        estimator="anytime-valid prediction-powered confidence sequence (stats.anytime: IPW pseudo-outcomes "
                  "λμ_f + r(Y − λŶ), λ tuned on past labels only, r = difficulty weight / inclusion probability; "
                  "a linear boundary, Howard et al. 2021), labels in the order the experts submitted them; valid "
                  "at every look, clipped to the 0–1 scale",
        judge_only="difficulty-weighted mean of the judge's composites, stratified percentile bootstrap",
        rank_method=f"Bonferroni-simultaneous {1 - alpha:.0%} anytime intervals on all {n_pairs} pairwise "
                    "differences of calibrated scores (per-case differences where both models' responses to the "
                    "same cases were labelled); a model's rank set runs from 1 + the models clearly above it to "
                    "K − the models clearly below it",
        margin=r6(options.margin), horizon=options.horizon,
        arrival="the order the experts submitted their scores (first submission per item; unknown last, by response)",
    )


def _trial_meta(meta: CalibratedMeta, options: Options, boards: dict[str, _ModelBoard]) -> None:
    """The guardrail's meta keys (none when it is off): the minimum, and whether the run is a trial."""
    if options.min_cases > 1:
        meta.min_cases = options.min_cases
        meta.trial = run_is_trial({m: b.entry.judged for m, b in boards.items()}, minimum=options.min_cases)


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
    languages = sorted({primary_language(r.language) for r in rows})
    if len(languages) >= 2:  # with one language its cell is the overall score: left out, so one-language boards keep their numbers
        for model, board in boards.items():
            board.entry.by_language = _language_cells(model, by_model[model], options)
    for model, board in boards.items():
        board.entry.rank_set = ([1 + ranking.above[model], ranking.count - ranking.below[model]]
                                if model in ranking.ranked else None)
        if options.severity_notes is not None:
            _severity_attach(board.entry, by_model[model])
    models = sorted((b.entry for b in boards.values()),
                    key=lambda e: (e.calibrated.estimate is None, -(e.calibrated.estimate or 0.0), e.model))
    meta = _meta(options, len(ranking.pairs))
    _trial_meta(meta, options, boards)
    _severity_meta(meta, options)
    meta.languages = languages or None
    return CalibratedReport(
        schema=SCHEMA_VERSION, meta=meta,
        counts=_counts(rows, labelled, excluded), warnings=_warnings(labelled, excluded),
        statements=_statements([c for b in boards.values() for c in b.candidates], options.alpha),
        models=models, pairs=ranking.pairs,
    )


# ---------------------------------------------------------------------------------------- truth with rater severity
SEVERITY_TRUTH_METHOD = (
    "Per panel, a many-facet graded model (response quality, sub-dimension "
    "steps, rater severity; stats.raters) fitted on the cycle's submitted scores; each panel-mean sub-score gets the "
    "model's fair average (an expert of the panel's average severity) minus the score it expects from the experts "
    "who did score it, both at the same estimated quality; gold stays gold; composites as for the default truth. "
    "Per model and dimension: the mean truth both ways over the judged, labelled responses that have both, and the "
    "shift (adjusted − panel mean). The leaderboard's scores and intervals use the default truth")


def _severity_meta(meta: CalibratedMeta, options: Options) -> None:
    """The meta keys of the severity-adjusted truth (none when it was not computed)."""
    if options.severity_notes is not None:
        meta.severity_truth = SEVERITY_TRUTH_METHOD
        meta.severity_notes = list(options.severity_notes)


def severity_sensitivity(rows: Sequence[InputRow]) -> TruthSensitivity:
    """The mean panel-mean truth and the mean severity-adjusted truth of `rows`' judged, labelled responses that have
    both, with the shift; words when there is none, or when some labelled responses have no adjusted truth."""
    labelled = [r for r in rows if r.judge is not None and r.expert is not None]
    both = [r for r in labelled if r.expert_fair is not None]
    if not labelled:
        return TruthSensitivity(n=0, labelled=0, panel_mean=None, severity_adjusted=None, shift=None,
                                words="no judged, expert-labelled response: no truth to compare")
    if not both:
        return TruthSensitivity(
            n=0, labelled=len(labelled), panel_mean=None, severity_adjusted=None, shift=None,
            words=f"the rater model could not be fitted for the panel(s) that scored these {len(labelled)} "
                  "labelled response(s) (why: the notes above the table): no severity-adjusted truth")
    panel = float(np.mean([r.expert for r in both]))
    fair = float(np.mean([r.expert_fair for r in both]))
    words = None
    if len(both) < len(labelled):
        words = (f"{len(labelled) - len(both)} of {len(labelled)} labelled responses have no severity-adjusted truth "
                 "(their panel's rater model could not be fitted): both means are over the other "
                 f"{len(both)}")
    panel_mean, adjusted = r6(panel), r6(fair)
    assert panel_mean is not None and adjusted is not None  # means of composites in [0, 1]
    return TruthSensitivity(n=len(both), labelled=len(labelled), panel_mean=panel_mean, severity_adjusted=adjusted,
                            shift=r6(adjusted - panel_mean), words=words)


def _severity_attach(entry: ModelEntry, mine: Sequence[InputRow]) -> None:
    """A model's truth with rater severity, overall and per dimension (its own block: no other figure moves)."""
    entry.severity_truth = severity_sensitivity(mine)
    entry.severity_truth_by_dimension = {
        value: severity_sensitivity([r for r in mine if r.dimension == value])
        for value in sorted({r.dimension for r in mine})}
