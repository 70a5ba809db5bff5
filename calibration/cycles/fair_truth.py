"""Truth with severity: the experts' truth with each panel's rater severities taken out — a sensitivity (issue 34).

The calibrated leaderboard's truth (`calibration.cycles.truth`) is, per response and sub-dimension, the gold score
where there is one, else the panel's mean. A mean moves with *who* scored: a response scored by a severe expert gets
a lower truth than the same response scored by a lenient one. The severity-adjusted truth adds to the panel mean
what the scorers' severities took off it, from the many-facet model fitted per panel on the cycle's submitted scores
(`stats.raters`): the fair average (`fair_average`, the score expected from a rater of the panel's average
severity — Linacre's FACETS "fair average", Eckes 2015 ch. 4) minus the score expected from the raters who did
score it, both at the same estimated quality (`severity_corrections`). Gold stays gold; composites follow the same
rule (`truth.composite_of`). Per model, the shift is the mean adjusted composite minus the mean panel-mean
composite over the responses that have both. The IRR report's α is not touched: it is agreement, not truth.

A panel whose model cannot be fitted (one expert, too few ratings, one category) gets no adjusted truth for the
cells only it scored (their responses are left out of `adjusted`; gold cells stay gold), and a note says which panel
and why — the adjusted truth is never silently the panel mean for a reason nobody can see.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from annotations.models import CalibrationCycle, GoldScore
from stats.raters import MIN_RATINGS, RaterDataError, facets_fit, fair_average, rater_data

from .truth import ResponseTruth, composite_of, response_truths, sub_weights, submitted_sub_scores

Cell = tuple[int, str]  # (item, sub-dimension key)


@dataclass(frozen=True)
class PanelRating:
    panel: str  # the panel's name (in notes)
    item: int  # the cycle item
    rater: int  # the expert
    key: str
    score: int


def severity_corrections(ratings: Sequence[PanelRating], *,
                         categories: int = 4) -> tuple[dict[Cell, float], list[str]]:
    """{(item, key): what the raters' severities took off the cell's panel mean}, per panel, and notes for panels
    left at their means.

    The correction is the model's fair average (a rater of the panel's average severity) minus the model's expected
    score averaged over the raters who did score the cell, both at the same estimated quality: so the adjusted truth
    (panel mean + correction) moves only for who scored, not for the quality estimate's shrinkage toward the mean.
    An item scored by more than one panel gets the rating-weighted mean of the panels' corrections.
    """
    by_panel: dict[str, list[PanelRating]] = defaultdict(list)
    for r in ratings:
        by_panel[r.panel].append(r)
    total: dict[Cell, float] = defaultdict(float)
    weight: dict[Cell, int] = defaultdict(int)
    notes: list[str] = []
    for panel, rows in by_panel.items():
        if len({r.rater for r in rows}) < 2:
            notes.append(f"{panel}: only one expert scored, so there is no severity to take out (panel mean kept)")
            continue
        problem = panel_unfittable(rows)
        if problem:
            notes.append(f"{panel}: the rater model cannot be fitted ({problem}; panel mean kept)")
            continue
        try:
            data = rater_data([r.item for r in rows], [r.rater for r in rows], [r.key for r in rows],
                              [r.score for r in rows], categories=categories)
            fit = facets_fit(data)
        except RaterDataError as exc:
            notes.append(f"{panel}: the rater model cannot be fitted ({exc}; panel mean kept)")
            continue
        fair = fair_average(fit, categories)
        # Each rating's expected score under its own rater's severity, at the same θ and τ as the fair average.
        expected = expit(fit.quality[data.item][:, None] - fit.severity[data.rater][:, None]
                         - fit.steps[data.sub]).sum(axis=1)
        for index, r in enumerate(rows):
            cell = (r.item, r.key)
            total[cell] += float(fair[data.item[index], data.sub[index]] - expected[index])
            weight[cell] += 1
    return {cell: total[cell] / weight[cell] for cell in total}, notes


def panel_unfittable(rows: Sequence[PanelRating]) -> str | None:
    """Why one panel's ratings cannot give severities, in words (None: they can be fitted).

    One category: nobody's severity can be told apart. Fewer than `MIN_RATINGS` ratings: too few to estimate a
    severity. No common items: severities are compared on items several experts scored (the anchors that link
    them); experts in groups that never scored the same item cannot be compared, whatever the model returns.
    """
    if len({r.score for r in rows}) < 2:
        return "every score is in one category, so nobody's severity can be told apart"
    if len(rows) < MIN_RATINGS:
        return f"only {len(rows)} ratings; it needs at least {MIN_RATINGS}"
    groups = _linked_groups(rows)
    if groups > 1:
        return (f"its experts fall into {groups} groups that never scored the same item, so there are no common "
                "items (anchors) to compare their severities on")
    return None


def _linked_groups(rows: Sequence[PanelRating]) -> int:
    """How many groups of experts are linked by items they both scored (union–find over the raters)."""
    parent: dict[int, int] = {r.rater: r.rater for r in rows}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[int, int] = {}
    for r in rows:
        other = first.setdefault(r.item, r.rater)
        parent[root(r.rater)] = root(other)
    return len({root(x) for x in parent})


@dataclass(frozen=True)
class TruthShift:
    model: str
    n: int  # responses with both truths
    panel_mean: float  # mean composite (0–1) under the leaderboard's truth
    severity_adjusted: float  # mean composite under the severity-adjusted truth
    shift: float  # severity_adjusted − panel_mean


@dataclass
class SeverityTruth:
    adjusted: dict[int, float]  # response id → severity-adjusted composite (absent: its panel was not fitted)
    shifts: list[TruthShift]
    notes: list[str] = field(default_factory=list)


def severity_adjusted_truth(*, cycle: CalibrationCycle) -> SeverityTruth:
    """Each model's mean truth under the panel-mean rule and under the severity-adjusted one, with the shift."""
    truths = response_truths(cycle=cycle, basis="panel")
    rows = submitted_sub_scores().filter(annotation__assignment__cycle=cycle).values_list(
        "annotation__assignment__panel__name", "annotation__assignment__item_id", "annotation__assignment__expert_id",
        "key", "score")
    corrections, notes = severity_corrections([PanelRating(*row) for row in rows])
    gold = {(item, key): score for item, key, score in GoldScore.objects.filter(
        decision__item__cycle=cycle, decision__is_current=True).values_list("decision__item_id", "key", "score")}
    weights = sub_weights(rubric_id=cycle.rubric_id)
    adjusted: dict[int, float] = {}
    for response_id, truth in truths.items():
        if any((truth.item_id, key) not in gold and (truth.item_id, key) not in corrections for key in truth.scores):
            continue  # a cell only an unfitted panel scored: no adjusted truth (the notes say why), never the mean
        scores = {key: float(gold[(truth.item_id, key)]) if (truth.item_id, key) in gold
                  else value + corrections[(truth.item_id, key)] for key, value in truth.scores.items()}
        composite = composite_of(scores, weights[truth.dimension])
        if composite is not None:
            adjusted[response_id] = composite
    return SeverityTruth(adjusted=adjusted, shifts=_shifts(truths, adjusted), notes=notes)


def _shifts(truths: dict[int, ResponseTruth], adjusted: dict[int, float]) -> list[TruthShift]:
    from evaluations.models import ModelResponse

    names = dict(ModelResponse.objects.filter(pk__in=adjusted).values_list("pk", "model__name"))
    per_model: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for response_id, value in adjusted.items():
        per_model[names[response_id]].append((truths[response_id].composite, value))
    out = []
    for model, pairs in sorted(per_model.items()):
        panel_mean, fair_mean = (float(np.mean(column)) for column in zip(*pairs, strict=True))
        out.append(TruthShift(model=model, n=len(pairs), panel_mean=panel_mean, severity_adjusted=fair_mean,
                              shift=fair_mean - panel_mean))
    return out
