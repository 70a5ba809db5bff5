"""A seeded synthetic calibration cycle of any size, as the plain records `calibration_report_build` takes.

Shaped like a real cycle: one panel per tradition (the raters split evenly over the traditions), every
item of a tradition scored by that tradition's panel, a whole item missing now and then (an expert who
did not finish the queue), scores from a latent response quality plus the rater's severity and noise
that grows from dimension to dimension, a lenient judge that fails on a few items, and gold decisions on
a quarter of the items (the panel's median, as the demo's adjudicator records it).

Used by the report and PDF tests and by `benchmarks/report_build.py`; the default size is the issue's
"6 dimensions × 8 traditions × 60 raters".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calibration.cycles.ratings import Rating, UnitInfo, majority
from calibration.reports.build import calibration_report_build
from calibration.reports.schema import Provenance, Report

RUBRIC = {  # methodology v1.0: dimension → sub-dimensions
    "textual": ["lexicalAccuracy", "translationFidelity", "linguisticReasoning", "sourceHandling"],
    "hermeneutical": ["interpretiveMethod", "genreAwareness", "contextualAnalysis", "canonicalIntegration"],
    "doctrinal": ["doctrinalAccuracy", "traditionFidelity", "nuanceRecognition", "sourceGrounding"],
    "historical": ["historicalAccuracy", "developmentAwareness", "patristicKnowledge", "historiographicalMethod"],
    "apologetics": ["logicalValidity", "evidenceUsage", "objectionHandling", "persuasiveClarity"],
    "intertextual": ["crossReferenceAccuracy", "typologicalRecognition", "allusionDetection", "thematicIntegration"],
}
TRADITIONS = ["catholic", "orthodox", "reformed", "evangelical", "pentecostal", "anglican", "lutheran", "none"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]


@dataclass
class SyntheticCycle:
    """The builder's inputs for one synthetic cycle, and the rater codes in panel order."""

    ratings: list[Rating]
    judge: dict[tuple[str, str], int]
    gold: dict[tuple[str, str], int]
    units: list[UnitInfo]
    raters: list[str]
    meta: Provenance = field(default_factory=Provenance)

    def report(self, *, n_resamples: int = 1000, seed: int = 20260101) -> Report:
        """The report through the real builder."""
        return calibration_report_build(self.ratings, judge=self.judge, gold=self.gold, units=self.units,
                                        n_resamples=n_resamples, seed=seed, meta=self.meta)


def synthetic_cycle(
    *,
    n_raters: int = 60,
    n_dimensions: int = 6,
    n_traditions: int = 8,
    items_per_cell: int = 7,
    missing_share: float = 0.08,
    seed: int = 11,
    cycle_name: str = "Synthetic cycle (6 dimensions × 8 traditions × 60 raters)",
) -> SyntheticCycle:
    """A cycle of n_dimensions × n_traditions × items_per_cell items, each scored by its tradition's panel."""
    if n_raters < 2 * n_traditions:
        raise ValueError("every tradition's panel needs at least two raters")
    rng = np.random.default_rng(seed)
    dimensions = list(RUBRIC)[:n_dimensions]
    traditions = TRADITIONS[:n_traditions]
    raters = [f"R{i + 1:02d}" for i in range(n_raters)]
    panel = {t: [r for i, r in enumerate(raters) if i % n_traditions == k] for k, t in enumerate(traditions)}
    severity = dict(zip(raters, rng.normal(0.0, 0.25, n_raters), strict=True))
    noise = dict(zip(dimensions, np.linspace(0.45, 0.85, len(dimensions)), strict=True))

    ratings: list[Rating] = []
    units: list[UnitInfo] = []
    judge: dict[tuple[str, str], int] = {}
    gold: dict[tuple[str, str], int] = {}
    item_number = 0
    for dimension in dimensions:
        for tradition in traditions:
            for _ in range(items_per_cell):
                item_number += 1
                item = f"it{item_number:04d}"
                difficulty = DIFFICULTIES[int(rng.choice(4, p=[0.3, 0.3, 0.25, 0.15]))]
                quality = rng.normal(1.6, 0.8) - 0.25 * DIFFICULTIES.index(difficulty)
                scorers = [r for r in panel[tradition] if rng.random() >= missing_share]
                judged = rng.random() >= 0.03
                adjudicated = rng.random() < 0.25
                for sub in RUBRIC[dimension]:
                    unit = UnitInfo(item, sub, dimension, tradition, difficulty)
                    units.append(unit)
                    level = quality + rng.normal(0.0, 0.3)
                    scores = []
                    for rater in scorers:
                        score = int(np.clip(np.rint(level + severity[rater] + rng.normal(0.0, noise[dimension])), 0, 3))
                        scores.append(score)
                        ratings.append(Rating(unit, rater, score))
                    if judged:
                        judge[unit.key] = int(np.clip(np.rint(level + 0.25 + rng.normal(0.0, 0.6)), 0, 3))
                    if adjudicated and scores:
                        gold[unit.key] = majority(scores)
    return SyntheticCycle(ratings=ratings, judge=judge, gold=gold, units=units, raters=raters,
                          meta=Provenance(cycle=cycle_name, rubric_version="1.0", judge_run=1))
