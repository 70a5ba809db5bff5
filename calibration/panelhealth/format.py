"""The one formatter of the panel health room's figures: '—' for None/NaN/inf, never 'nan'."""
from __future__ import annotations

import math


def fmt(value: float | None, digits: int = 2, signed: bool = False) -> str:
    """The one formatter of this room's figures: '—' for None/NaN/inf, never 'nan'."""
    if value is None or not math.isfinite(float(value)):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_interval(interval: tuple[float, float] | None, digits: int = 2, signed: bool = False) -> str:
    if interval is None or not all(math.isfinite(x) for x in interval):
        return ""
    return f"{fmt(interval[0], digits, signed)} to {fmt(interval[1], digits, signed)}"
