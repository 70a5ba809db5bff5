"""The ``irr`` report over a long-format file: one :func:`reliability_summary` per group, as JSON or a table.

``manage.py irr`` only parses options and prints; the work is here so scripts and services reuse it.
Each group gets its own random stream spawned from ``--seed`` (``numpy.random.SeedSequence.spawn``), so a
group's interval does not depend on which other groups the file holds.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from stats.alpha import DEFAULT_ALPHA_MIN, Level
from stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
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
) -> dict[str, Any]:
    """Return the JSON-ready IRR report: top-level summary keys, or ``groups`` keyed by the group value.

    Source: the coefficients of :func:`stats.reliability.reliability_summary`. Example: Krippendorff's
    2011 data at ``level="interval"`` → ``report["krippendorff_alpha"] ≈ 0.849``.
    """
    streams = np.random.SeedSequence(seed).spawn(len(ratings.groups))
    summaries: dict[str, dict[str, Any]] = {}
    for group, stream in zip(ratings.groups, streams, strict=True):
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
        summary["categories"] = list(ratings.category_labels)
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
    boot = f"{resamples} resamples, percentile, seed {report['seed']}" if resamples else "off"
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
    if s["leave_one_rater_out"]:
        parts = [f"{r['rater']} {_num(r['alpha_without'])} ({_signed(r['change'])})" for r in s["leave_one_rater_out"]]
        out.append(_row("alpha without rater (change)", " · ".join(parts)))
    if s["warnings"]:
        out.append("  warnings:")
        out.extend(f"    - {w}" for w in s["warnings"])
    return out


def _row(label: str, text: str) -> str:
    return f"  {label:<34}{text}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
