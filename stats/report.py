"""The ``irr`` report over a long-format file: one :func:`reliability_summary` per group, as JSON or a table.

``manage.py irr`` only parses options and prints; the work is here so scripts and services reuse it.
Each group's random stream is derived from ``--seed`` and the group's *name*
(:func:`stats.bootstrap.named_seed_sequence`: SeedSequence([seed, SHA-256 of the name])), so adding,
removing or reordering groups never changes another group's intervals.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stats.alpha import DEFAULT_ALPHA_MIN, Level
from stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, named_seed_sequence
from stats.diagnostics import DEFAULT_FLAG_MARGIN, bland_altman, rater_bias
from stats.longformat import LongRatings
from stats.reliability import reliability_summary
from stats.shapes import ReliabilitySummary


@dataclass(frozen=True)
class RaterDiagnostics:
    """One rater against the rest of the panel: mean signed difference with its t interval, the flag, α without
    the rater and the share of each scale point."""

    mean_difference: float | None
    low: float | None
    high: float | None
    n: int
    flagged: bool
    alpha_without: float | None
    shares: dict[str, float]


@dataclass(frozen=True)
class JudgeAgreement:
    """The named judge against the median of the other raters (Bland–Altman)."""

    rater: str
    n_units: int
    mean_difference: float | None
    sd: float | None
    lower_limit: float | None
    upper_limit: float | None


@dataclass(frozen=True)
class Diagnostics:
    """Every rater's diagnostics, the flag margin and, when a judge was named, its agreement (None: not a rater of
    this group)."""

    raters: dict[str, RaterDiagnostics]
    flag_margin: float
    judge_named: bool = False
    judge: JudgeAgreement | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"raters": {name: dataclasses.asdict(r) for name, r in self.raters.items()},
                                  "flag_margin": self.flag_margin}
        if self.judge_named:
            out["judge"] = None if self.judge is None else dataclasses.asdict(self.judge)
        return out


@dataclass(frozen=True)
class GroupReport:
    """One group's summary (warnings added by this report), the file's category labels (shown in place of the
    summary's category codes) and, when asked for, its diagnostics."""

    summary: ReliabilitySummary
    categories: list[int | float | str]
    diagnostics: Diagnostics | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = dict(self.summary)
        out["categories"] = self.categories  # the summary's own key, so its place in the output is kept
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics.to_json()
        return out


@dataclass(frozen=True)
class IrrReport:
    """The irr report: the file and options, and one summary per group ("" when the file is not grouped)."""

    file: str
    level: str
    min_alpha: float
    bootstrap_resamples: int
    seed: int | None
    group_by: str | None
    groups: dict[str, GroupReport]

    def to_json(self) -> dict[str, object]:
        """The JSON-ready report: the header and the summary's keys, or ``groups`` keyed by the group value."""
        header: dict[str, object] = {"file": self.file, "level": self.level, "min_alpha": self.min_alpha,
                                     "bootstrap_resamples": self.bootstrap_resamples, "seed": self.seed}
        if self.group_by is None:
            return {**header, **self.groups[""].to_json()}
        return {**header, "group_by": self.group_by, "groups": {k: g.to_json() for k, g in self.groups.items()}}


def irr_report_build(
    ratings: LongRatings,
    *,
    level: Level = "ordinal",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha_min: float = DEFAULT_ALPHA_MIN,
    seed: int | None = None,
    group_by: str | None = None,
    diagnostics: bool = False,
    judge: str | None = None,
) -> IrrReport:
    """Return the IRR report (``to_json()``: top-level summary keys, or ``groups`` keyed by the group value).

    ``diagnostics=True`` adds each group's ``diagnostics``: per rater the mean signed difference from the rest
    of the panel with its t interval, the flag (interval beyond ±0.5), the share of each scale point and α
    without the rater (:mod:`stats.diagnostics`); with ``judge`` naming one rater, that rater's Bland–Altman
    summary against the median of the others.

    Source: the coefficients of :func:`stats.reliability.reliability_summary`. Example: Krippendorff's
    2011 data at ``level="interval"`` → ``report.to_json()["krippendorff_alpha"] ≈ 0.849``.
    """
    summaries: dict[str, GroupReport] = {}
    for group in ratings.groups:
        stream = named_seed_sequence(seed, "" if group.key is None else group.key)
        summary = reliability_summary(
            group.matrix,
            level=level,
            categories=ratings.categories,
            rater_labels=group.rater_ids,
            n_resamples=n_resamples,
            confidence=confidence,
            alpha_min=alpha_min,
            strata=group.strata,
            seed=np.random.default_rng(stream),
        )
        found = _diagnostics(group.matrix, group.rater_ids, ratings, summary, judge) if diagnostics else None
        bootstrap = summary["bootstrap"]
        if bootstrap:
            bootstrap["seed"] = seed
        if ratings.n_missing_rows:
            summary["warnings"].append(
                f"{ratings.n_missing_rows} row(s) in the file had an empty or NA value and count as missing"
            )
        summaries["" if group.key is None else group.key] = GroupReport(summary, list(ratings.category_labels), found)
    return IrrReport(file=ratings.source, level=level, min_alpha=alpha_min, bootstrap_resamples=n_resamples,
                     seed=seed, group_by=group_by, groups=summaries)


def _diagnostics(
    matrix: Any, raters: Sequence[str], ratings: LongRatings, summary: ReliabilitySummary, judge: str | None
) -> Diagnostics:
    """Rater bias, score shares and α without each rater; the judge's Bland–Altman summary when one is named."""
    labels = dict(zip((float(c) for c in ratings.categories), (str(c) for c in ratings.category_labels), strict=True))
    without = {r["rater"]: r["alpha_without"] for r in summary.get("leave_one_rater_out", [])}
    rows = {bias.rater: RaterDiagnostics(
        mean_difference=bias.mean_difference, low=bias.low, high=bias.high, n=bias.n_units, flagged=bias.flagged,
        alpha_without=without.get(bias.rater),
        shares={labels.get(float(point), point): share for point, share in bias.shares.items()},
    ) for bias in rater_bias(matrix, rater_labels=list(raters), categories=ratings.categories)}
    agreement = None
    if judge is not None:
        if judge not in raters:
            summary["warnings"].append(f"diagnostics: no rater called {judge!r} in this group")
        else:
            row = list(raters).index(judge)
            others = np.delete(np.asarray(matrix, dtype=float), row, axis=0)
            agreement = JudgeAgreement(rater=judge, **dataclasses.asdict(
                bland_altman(np.asarray(matrix, dtype=float)[row], others)))
    return Diagnostics(raters=rows, flag_margin=DEFAULT_FLAG_MARGIN, judge_named=judge is not None, judge=agreement)


def irr_report_json(report: IrrReport) -> str:
    """Return the report as indented JSON; refuses NaN/Infinity so an undefined value can only be null.

    Source: RFC 8259 (JSON has no NaN). Example: a report of one group → ``'{\\n  "file": …'``.
    """
    return json.dumps(report.to_json(), indent=2, allow_nan=False, ensure_ascii=False)


def irr_report_table(report: IrrReport) -> str:
    """Return the report as a plain-text table for a terminal, one block per group.

    Source: the same numbers as :func:`irr_report_json`, rounded to 3 decimals. Example: a line
    ``Krippendorff's alpha (ordinal)   0.815  95% CI [0.446, 0.997]  P(alpha < 0.667) = 0.187``.
    """
    level = report.level
    resamples = report.bootstrap_resamples
    boot = f"{resamples} resamples, percentile or BCa by simulated coverage, seed {report.seed}" if resamples else "off"
    lines = [
        f"Inter-rater reliability: {report.file}",
        f"level {level} · bootstrap {boot} · alpha min {report.min_alpha:g}",
    ]
    if report.group_by is not None:
        for key, group in report.groups.items():
            lines.append("")
            lines.append(f"[{report.group_by} = {key}]")
            lines.extend(_summary_lines(group, report.min_alpha))
    else:
        lines.append("")
        lines.extend(_summary_lines(report.groups[""], report.min_alpha))
    return "\n".join(lines)


def _summary_lines(group: GroupReport, alpha_min: float) -> list[str]:
    s = group.summary
    out = [
        f"  categories {', '.join(str(c) for c in group.categories)}",
        f"  units {s['n_units']} (pairable {s['n_pairable_units']}, not pairable {s['n_unpairable_units']}) · "
        f"raters {s['n_raters']} · ratings {s['n_ratings']}",
    ]
    bootstrap = s["bootstrap"]
    alpha_text = _num(s["krippendorff_alpha"])
    ci = s.get("alpha_ci")
    if ci is not None:
        confidence = bootstrap["confidence"] if bootstrap else 0.95
        alpha_text += f"  {confidence:.0%} CI [{_num(ci[0])}, {_num(ci[1])}]"
    if s.get("alpha_below_min_probability") is not None:
        alpha_text += f"  P(alpha < {alpha_min:g}) = {_num(s['alpha_below_min_probability'])}"
    out.append(_row(f"Krippendorff's alpha ({s['level']})", alpha_text))
    out.append(_row("percent agreement", _num(s["percent_agreement"])))
    out.append(_row("within-one agreement", _num(s["within_one_agreement"])))
    out.append(_row("Fleiss' kappa", _num(s["fleiss_kappa"])))
    out.append(_row("Gwet's AC1", _num(s["gwet_ac1"])))
    ac2 = s["gwet_ac2"]
    out.append(_row("Gwet's AC2 linear / quadratic", f"{_num(ac2['linear'])} / {_num(ac2['quadratic'])}"))
    if "cohen_kappa" in s:
        k = s["cohen_kappa"]
        out.append(
            _row(
                f"Cohen's kappa ({' vs '.join(s['cohen_kappa_raters'])})",
                f"unweighted {_num(k['unweighted'])} · linear {_num(k['linear'])} · "
                f"quadratic {_num(k['quadratic'])}",
            )
        )
    if "spearman_rho" in s:
        out.append(_row("Spearman rho / Kendall tau-b", f"{_num(s['spearman_rho'])} / {_num(s['kendall_tau_b'])}"))
    intervals = {name: entry for name, entry in (s.get("intervals") or {}).items() if entry is not None}
    if intervals:
        confidence = bootstrap["confidence"] if bootstrap else DEFAULT_CONFIDENCE
        out.append(f"  {confidence:.0%} intervals (method; * = simulated coverage below 0.93 for this design):")
        for name, entry in intervals.items():
            if entry["low"] is None:
                text = f"none ({entry['reason']})"
            else:
                star = f"  ({entry['coverage_basis']})" if entry["reliable"] and entry.get("coverage_basis") else (
                    "" if entry["reliable"] else f" *  {entry['reason']}")
                text = f"[{_num(entry['low'])}, {_num(entry['high'])}] {entry['method']}{star}"
            out.append(_row(f"  {name}", text))
    if s["leave_one_rater_out"]:
        parts = [f"{r['rater']} {_num(r['alpha_without'])} ({_signed(r['change'])})" for r in s["leave_one_rater_out"]]
        out.append(_row("alpha without rater (change)", " · ".join(parts)))
    if group.diagnostics is not None:
        out.extend(_diagnostic_lines(group.diagnostics))
    if s["warnings"]:
        out.append("  warnings:")
        out.extend(f"    - {w}" for w in s["warnings"])
    return out


def _diagnostic_lines(d: Diagnostics) -> list[str]:
    out = [f"  rater diagnostics (mean signed difference from the rest, 95% t interval; ! = beyond ±{d.flag_margin:g}):"]
    for rater, r in d.raters.items():
        interval = f"[{_num(r.low)}, {_num(r.high)}]" if r.low is not None else "n/a"
        shares = " ".join(f"{point}:{share:.0%}" for point, share in r.shares.items())
        out.append(_row(f"  {rater}{' !' if r.flagged else ''}",
                        f"{_signed(r.mean_difference)} {interval} n={r.n} · alpha without {_num(r.alpha_without)}"
                        f" · {shares}"))
    judge = d.judge
    if judge:
        limits = (f"[{_num(judge.lower_limit)}, {_num(judge.upper_limit)}]"
                  if judge.lower_limit is not None else "n/a")
        out.append(_row(f"  judge {judge.rater} − median", f"mean {_signed(judge.mean_difference)} · SD "
                                                           f"{_num(judge.sd)} · 95% limits {limits} · n={judge.n_units}"))
    return out


def _row(label: str, text: str) -> str:
    return f"  {label:<34}{text}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
