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
from typing import Any

import numpy as np

from stats.alpha import DEFAULT_ALPHA_MIN, Level
from stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, named_seed_sequence
from stats.diagnostics import DEFAULT_FLAG_MARGIN, bland_altman, rater_bias
from stats.longformat import LongRatings
from stats.reliability import reliability_summary


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
) -> dict[str, Any]:
    """Return the JSON-ready IRR report: top-level summary keys, or ``groups`` keyed by the group value.

    ``diagnostics=True`` adds each group's ``diagnostics``: per rater the mean signed difference from the rest
    of the panel with its t interval, the flag (interval beyond ±0.5), the share of each scale point and α
    without the rater (:mod:`stats.diagnostics`); with ``judge`` naming one rater, that rater's Bland–Altman
    summary against the median of the others.

    Source: the coefficients of :func:`stats.reliability.reliability_summary`. Example: Krippendorff's
    2011 data at ``level="interval"`` → ``report["krippendorff_alpha"] ≈ 0.849``.
    """
    summaries: dict[str, dict[str, Any]] = {}
    for group in ratings.groups:
        stream = named_seed_sequence(seed, "" if group.key is None else group.key)
        # The irr report relabels the categories and adds diagnostics: its own dict, not the summary's shape.
        summary: dict[str, Any] = {**reliability_summary(
            group.matrix,
            level=level,
            categories=ratings.categories,
            rater_labels=group.rater_ids,
            n_resamples=n_resamples,
            confidence=confidence,
            alpha_min=alpha_min,
            strata=group.strata,
            seed=np.random.default_rng(stream),
        )}
        summary["categories"] = list(ratings.category_labels)
        if diagnostics:
            summary["diagnostics"] = _diagnostics(group.matrix, group.rater_ids, ratings, summary, judge)
        if summary.get("bootstrap"):
            summary["bootstrap"]["seed"] = seed
        if ratings.n_missing_rows:
            summary["warnings"].append(
                f"{ratings.n_missing_rows} row(s) in the file had an empty or NA value and count as missing"
            )
        summaries["" if group.key is None else group.key] = summary
    header: dict[str, Any] = {
        "file": ratings.source,
        "level": level,
        "min_alpha": alpha_min,
        "bootstrap_resamples": n_resamples,
        "seed": seed,
    }
    if group_by is None:
        return {**header, **summaries[""]}
    return {**header, "group_by": group_by, "groups": summaries}


def _diagnostics(
    matrix: Any, raters: Sequence[str], ratings: LongRatings, summary: dict[str, Any], judge: str | None
) -> dict[str, Any]:
    """Rater bias, score shares and α without each rater; the judge's Bland–Altman summary when one is named."""
    labels = dict(zip((float(c) for c in ratings.categories), (str(c) for c in ratings.category_labels), strict=True))
    without = {r["rater"]: r["alpha_without"] for r in summary.get("leave_one_rater_out", [])}
    out: dict[str, Any] = {"raters": {}, "flag_margin": DEFAULT_FLAG_MARGIN}
    for bias in rater_bias(matrix, rater_labels=list(raters), categories=ratings.categories):
        out["raters"][bias.rater] = {
            "mean_difference": bias.mean_difference, "low": bias.low, "high": bias.high, "n": bias.n_units,
            "flagged": bias.flagged, "alpha_without": without.get(bias.rater),
            "shares": {labels.get(float(point), point): share for point, share in bias.shares.items()},
        }
    if judge is not None:
        if judge not in raters:
            out["judge"] = None
            summary["warnings"].append(f"diagnostics: no rater called {judge!r} in this group")
        else:
            row = list(raters).index(judge)
            others = np.delete(np.asarray(matrix, dtype=float), row, axis=0)
            out["judge"] = {"rater": judge, **dataclasses.asdict(bland_altman(np.asarray(matrix, dtype=float)[row],
                                                                              others))}
    return out


def irr_report_json(report: dict[str, Any]) -> str:
    """Return the report as indented JSON; refuses NaN/Infinity so an undefined value can only be null.

    Source: RFC 8259 (JSON has no NaN). Example: ``irr_report_json({"a": None})`` → ``'{\\n  "a": null\\n}'``.
    """
    return json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False)


def irr_report_table(report: dict[str, Any]) -> str:
    """Return the report as a plain-text table for a terminal, one block per group.

    Source: the same numbers as :func:`irr_report_json`, rounded to 3 decimals. Example: a line
    ``Krippendorff's alpha (ordinal)   0.815  95% CI [0.446, 0.997]  P(alpha < 0.667) = 0.187``.
    """
    level = report["level"]
    resamples = report["bootstrap_resamples"]
    boot = f"{resamples} resamples, percentile or BCa by simulated coverage, seed {report['seed']}" if resamples else "off"
    lines = [
        f"Inter-rater reliability: {report['file']}",
        f"level {level} · bootstrap {boot} · alpha min {report['min_alpha']:g}",
    ]
    if "groups" in report:
        for key, summary in report["groups"].items():
            lines.append("")
            lines.append(f"[{report['group_by']} = {key}]")
            lines.extend(_summary_lines(summary, report["min_alpha"]))
    else:
        lines.append("")
        lines.extend(_summary_lines(report, report["min_alpha"]))
    return "\n".join(lines)


def _summary_lines(s: dict[str, Any], alpha_min: float) -> list[str]:
    out = [
        f"  categories {', '.join(str(c) for c in s['categories'])}",
        f"  units {s['n_units']} (pairable {s['n_pairable_units']}, not pairable {s['n_unpairable_units']}) · "
        f"raters {s['n_raters']} · ratings {s['n_ratings']}",
    ]
    alpha_text = _num(s["krippendorff_alpha"])
    ci = s.get("alpha_ci")
    if ci is not None:
        confidence = s["bootstrap"]["confidence"] if s.get("bootstrap") else 0.95
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
        confidence = s["bootstrap"]["confidence"] if s.get("bootstrap") else DEFAULT_CONFIDENCE
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
    if s.get("diagnostics"):
        out.extend(_diagnostic_lines(s["diagnostics"]))
    if s["warnings"]:
        out.append("  warnings:")
        out.extend(f"    - {w}" for w in s["warnings"])
    return out


def _diagnostic_lines(d: dict[str, Any]) -> list[str]:
    out = [f"  rater diagnostics (mean signed difference from the rest, 95% t interval; ! = beyond ±{d['flag_margin']:g}):"]
    for rater, r in d["raters"].items():
        interval = f"[{_num(r['low'])}, {_num(r['high'])}]" if r["low"] is not None else "n/a"
        shares = " ".join(f"{point}:{share:.0%}" for point, share in r["shares"].items())
        out.append(_row(f"  {rater}{' !' if r['flagged'] else ''}",
                        f"{_signed(r['mean_difference'])} {interval} n={r['n']} · alpha without {_num(r['alpha_without'])}"
                        f" · {shares}"))
    judge = d.get("judge")
    if judge:
        limits = (f"[{_num(judge['lower_limit'])}, {_num(judge['upper_limit'])}]"
                  if judge["lower_limit"] is not None else "n/a")
        out.append(_row(f"  judge {judge['rater']} − median", f"mean {_signed(judge['mean_difference'])} · SD "
                                                               f"{_num(judge['sd'])} · 95% limits {limits} · n={judge['n_units']}"))
    return out


def _row(label: str, text: str) -> str:
    return f"  {label:<34}{text}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
