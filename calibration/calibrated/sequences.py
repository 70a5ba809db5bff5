"""The calibrated board's anytime-valid figures (issue 31): one confidence sequence per cell, in label arrival order,
live verdicts and the controller that says which lever brings a verdict — no database, pure numpy over plain rows.

Every calibrated figure is ``stats.anytime`` on the cell's labels in the order the experts submitted them
(``InputRow.arrival``): pseudo-outcomes λₜμ_f + rₜ(Yₜ − λₜŶₜ), λ tuned on past labels only, IPW weights
rₜ ∝ difficulty weight / inclusion probability, a linear-boundary confidence sequence that is valid at every look
and clipped to the 0–1 scale (never outside it; a handful of labels gives a wide, never a zero-width, interval).

**Why one sequence may run over a model's labels from several dimensions.** A sequence needs label t to be a
draw from the design when it arrives. Each expert's queue is a seeded shuffle of their assignments
(``calibration.cycles.services``: ``random.Random(f"{cycle.seed}:{expert id}")``), so the order in which a
cycle's drawn items are labelled is random with respect to the draw, across dimensions and traditions; a
dimension cell is a single stratum anyway. Σπ over a cell's population (the draw's expected size there) is not in
the rows: it is estimated from the labelled items' π as n / Σ 1/π (Hájek's normalisation; exact for a uniform
draw, where every π in the cell is equal).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from stats import anytime
from stats.anytime import DifferenceEstimate, LabelledSample

from .schema import Advice, Estimate, Verdict

PANEL_DOMINATES = 0.5  # panel noise above this share of the residual variance: more experts per item helps more
DEFAULT_HORIZON = 30  # the horizon of a cell without labels yet (the forecast's)
MAX_HORIZON = 5000


def r6(value: float | None, places: int = 6, *, direction: str = "nearest") -> float | None:
    """Rounded for the stored tree; interval ends rounded outward so rounding never costs coverage."""
    if value is None or not math.isfinite(value):
        return None
    scale = 10 ** places
    if direction == "down":
        return math.floor(value * scale) / scale
    if direction == "up":
        return math.ceil(value * scale) / scale
    return round(float(value), places)


def _drawn_share(pi: np.ndarray) -> float:
    """Σπ over a population ÷ its size, from the labelled items' π (Hájek: n / Σ 1/π), at most 1; 1 without labels."""
    return min(pi.size / float(np.sum(1.0 / pi)), 1.0) if pi.size else 1.0


@dataclass(frozen=True)
class CellData:
    """A cell's labelled items in arrival order and its whole judged population (difficulty weights)."""

    y: np.ndarray
    yhat: np.ndarray
    w: np.ndarray
    pi: np.ndarray
    case: np.ndarray  # case ids of the labelled items (−1 unknown)
    arrival: np.ndarray  # arrival rank of each labelled item (ascending; the order the arrays are in)
    panel_var: np.ndarray  # variance of the panel mean per labelled item (NaN: not measured)
    yhat_u: np.ndarray
    w_u: np.ndarray
    case_u: np.ndarray

    @property
    def n(self) -> int:
        return int(self.y.size)

    def sample(self) -> LabelledSample:
        return LabelledSample(self.y, self.yhat, self.yhat_u, w=self.w, w_unlabeled=self.w_u, pi=self.pi,
                              pi_unlabeled=np.full(self.yhat_u.size, _drawn_share(self.pi)))

    def planned(self) -> int:
        """The sequence's horizon, from the design: the draw's expected labels in this cell, Σπ over its population
        (≈ n / Σ 1/π × N; exactly the planned draw for a uniform draw, whatever subset has arrived), at least 5.
        Fixed by the draw before the first label; DEFAULT_HORIZON before any label."""
        if not self.n or not self.yhat_u.size:
            return DEFAULT_HORIZON
        return int(min(max(round(_drawn_share(self.pi) * self.yhat_u.size), anytime.FEW_LABELS), MAX_HORIZON))

    @property
    def judge_mean(self) -> float | None:
        return float(np.average(self.yhat_u, weights=self.w_u)) if self.yhat_u.size else None


def _words(est: anytime.MeanEstimate | DifferenceEstimate) -> str | None:
    parts = [p for p in (est.reason, *est.notes) if p]
    return "; ".join(parts) if parts else None


def mean_estimate(data: CellData, *, alpha: float, horizon: int | None = None) -> anytime.MeanEstimate:
    """The cell's anytime sequence after its labels; horizon None: the draw's plan (``CellData.planned``)."""
    horizon = horizon or data.planned()
    s = data.sample()
    return anytime.mean_cs(s.Y, s.Yhat, s.Yhat_unlabeled, alpha=alpha, w=s.w, w_unlabeled=s.w_unlabeled, pi=s.pi,
                           pi_unlabeled=s.pi_unlabeled, horizon=horizon)


def as_estimate(est: anytime.MeanEstimate, *, alpha: float, covered: float, skipped: list) -> Estimate:
    """The stored block of an anytime mean: the interval outward-rounded, se = half-width ÷ z₁₋α/₂."""
    z = float(norm.ppf(1 - alpha / 2))
    has = est.estimate is not None and est.status in ("ok", "few_labels")
    return Estimate(
        estimate=r6(est.estimate) if has else None,
        lower=r6(est.lower, direction="down") if has else None,
        upper=r6(est.upper, direction="up") if has else None,
        se=r6(est.width / 2 / z) if has else None, lam=r6(est.lam) if has else None,
        n=est.n, covered_weight=r6(covered, 4), skipped=skipped, status=est.status, words=_words(est))


def shift_of(calibrated: Estimate, judge_mean: float | None) -> Estimate:
    """Shift = calibrated − judge-only, exactly: the judge's weighted mean is known (every response is judged), so
    the shift's interval is the calibrated one moved by it — the same estimate, the same labels, the same width."""
    judge = r6(judge_mean)
    if calibrated.estimate is None or judge is None or calibrated.lower is None or calibrated.upper is None:
        return Estimate(estimate=None, lower=None, upper=None, se=None, lam=None, n=calibrated.n,
                        covered_weight=calibrated.covered_weight, skipped=list(calibrated.skipped),
                        status=calibrated.status, words=calibrated.words or "no calibrated score: no shift")
    return Estimate(estimate=r6(calibrated.estimate - judge), lower=r6(calibrated.lower - judge),
                    upper=r6(calibrated.upper - judge), se=calibrated.se, lam=calibrated.lam, n=calibrated.n,
                    covered_weight=calibrated.covered_weight, skipped=list(calibrated.skipped),
                    status=calibrated.status, words=calibrated.words)


def _as_difference(shift: Estimate, alpha: float) -> DifferenceEstimate:
    status = shift.status or "ok"
    if shift.estimate is None or shift.lower is None or shift.upper is None:
        return DifferenceEstimate(None, -1.0, 1.0, shift.n, shift.n, 0, alpha, (-1.0, 1.0), False,
                                  "no_labels" if status in ("ok", "few_labels") else status, shift.words)
    return DifferenceEstimate(shift.estimate, shift.lower, shift.upper, shift.n, shift.n, 0, alpha, (-1.0, 1.0),
                              False, status, shift.words)


def verdict_out(raw: anytime.Verdict, *, a: str, b: str) -> Verdict:
    leader = {"a": a, "b": b}.get(raw.leader or "")
    return Verdict(verdict=raw.verdict, leader=leader, margin=raw.margin, lower=r6(raw.lower),
                   upper=r6(raw.upper), looks=raw.looks,
                   words=raw.reason.replace("a is ahead", f"{a} is ahead").replace("b is ahead", f"{b} is ahead"))


def shift_verdict(shift: Estimate, *, alpha: float, margin: float) -> Verdict:
    """The judge against the experts on this cell: separated (the judge over- or under-scores), equivalent within
    ±margin (the judge agrees with the experts), or continue — read off the shift's anytime interval."""
    raw = anytime.pair_verdict(_as_difference(shift, alpha), margin=margin)
    out = verdict_out(raw, a="experts", b="judge")
    if raw.verdict == "separated":
        verb = "under-scores" if raw.leader == "a" else "over-scores"
        out.words = (f"the judge {verb} this by {abs(shift.estimate or 0):.3f} (shift {raw.lower:+.3f} to "
                     f"{raw.upper:+.3f} after {raw.looks} label{'s' if raw.looks != 1 else ''}, clear of 0)")
    elif raw.verdict == "equivalent":
        out.words = f"the judge agrees with the experts within ±{margin:g}: " + raw.reason.split(": ", 1)[-1]
    return out


def panel_share(data: CellData, lam: float) -> float | None:
    """Panel noise (the variance of a panel's mean score) over the residual variance Var(Y − λŶ) of the labels."""
    measured = data.panel_var[np.isfinite(data.panel_var)]
    if data.n < 2 or measured.size < 2:
        return None
    residual = float(np.var(data.y - lam * data.yhat, ddof=1))
    if residual <= 1e-12:
        return None
    return min(float(np.mean(measured)) / residual, 1.0)


def step_sd(data: CellData, lam: float) -> float | None:
    """One label's pseudo-outcome SD (for the forecast), from the labels so far."""
    if data.n < 2:
        return None
    r = data.w / np.mean(data.w_u) / data.pi
    r = r / np.mean(r)
    return float(np.std(r * (data.y - lam * data.yhat), ddof=1))


def advice(verdict: Verdict, *, gap: float | None, sd: float | None, n: int, margin: float, alpha: float,
           horizon: int, share: float | None, where: list[str], half_width: float | None = None) -> Advice:
    """Which lever brings this verdict, and the expected further labels to it (stats.anytime.labels_to_verdict)."""
    if verdict.verdict in ("separated", "equivalent"):
        return Advice(lever="none", where=[], labels_to_verdict=0, target=verdict.verdict, panel_share=share,
                      words=f"enough: {verdict.verdict} after {verdict.looks} look(s)")
    if verdict.verdict == "invalid":
        return Advice(lever="none", where=[], labels_to_verdict=None, target="none", panel_share=share,
                      words=verdict.words)
    if gap is None or sd is None:
        return Advice(lever="labels", where=where, labels_to_verdict=None, target="none", panel_share=share,
                      words="fewer than 2 usable expert labels: label more (" + (", ".join(where) or "any") +
                            ") before a forecast is possible")
    forecast = anytime.labels_to_verdict(gap=gap, sd=sd, n_so_far=n, margin=margin, alpha=alpha, horizon=horizon,
                                         half_width_now=half_width)
    if share is not None and share > PANEL_DOMINATES:
        return Advice(lever="experts", where=where, labels_to_verdict=forecast.labels, target=forecast.target,
                      panel_share=r6(share, 3),
                      words=f"more experts per item: panel noise is {share:.0%} of the residual variance, so "
                            f"averaging more experts per item narrows the interval faster than new items; "
                            + forecast.reason)
    return Advice(lever="labels", where=where, labels_to_verdict=forecast.labels, target=forecast.target,
                  panel_share=None if share is None else r6(share, 3),
                  words="more expert labels" + (f" on {', '.join(where)}" if where else "") + ": " + forecast.reason)


def difference(a: CellData, b: CellData, *, alpha: float, horizon: int) -> DifferenceEstimate:
    """θ_a − θ_b: per-case differences when both models answered the same cases and at least 5 cases (and 3/4 of
    the smaller sample) were labelled for both with the same inclusion probability; else independent samples
    (the choice is made on counts alone, never on which interval comes out narrower)."""
    paired = _paired(a, b)
    if paired is not None:
        pa, pb = paired
        return anytime.paired_difference_cs(pa, pb, alpha=alpha, horizon=horizon)
    return anytime.difference_cs(a.sample(), b.sample(), alpha=alpha, horizon=horizon)


def _paired(a: CellData, b: CellData) -> tuple[LabelledSample, LabelledSample] | None:
    if (a.case_u < 0).any() or a.case_u.size != b.case_u.size or set(a.case_u.tolist()) != set(b.case_u.tolist()):
        return None
    if len(set(a.case_u.tolist())) != a.case_u.size:
        return None
    at_b = {c: i for i, c in enumerate(b.case.tolist())}
    common = [(i, at_b[c]) for i, c in enumerate(a.case.tolist()) if c >= 0 and c in at_b]
    # a case's pair of labels is complete when the later of the two arrives
    common.sort(key=lambda ij: (max(a.arrival[ij[0]], b.arrival[ij[1]]), int(a.case[ij[0]])))
    if len(common) < max(anytime.FEW_LABELS, 0.75 * min(a.n, b.n)):  # by counts, before any score is read
        return None
    ia = np.array([i for i, _ in common])
    ib = np.array([j for _, j in common])
    if not np.allclose(a.pi[ia], b.pi[ib]) or not np.allclose(a.w[ia], b.w[ib]):
        return None
    order_b = {c: i for i, c in enumerate(b.case_u.tolist())}
    align = np.array([order_b[c] for c in a.case_u.tolist()])
    if not np.allclose(a.w_u, b.w_u[align]):
        return None
    pi_u = np.full(a.yhat_u.size, _drawn_share(a.pi[ia]))
    sa = LabelledSample(a.y[ia], a.yhat[ia], a.yhat_u, w=a.w[ia], w_unlabeled=a.w_u, pi=a.pi[ia], pi_unlabeled=pi_u)
    sb = LabelledSample(b.y[ib], b.yhat[ib], b.yhat_u[align], w=a.w[ia], w_unlabeled=a.w_u, pi=a.pi[ia],
                        pi_unlabeled=pi_u)
    return sa, sb
