"""Agreement weights for weighted coefficients (1 on the diagonal, 0 for the farthest pair of categories)."""
from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from stats.matrix import FloatArray

WeightKind = Literal["identity", "linear", "quadratic"]
WEIGHT_KINDS: tuple[WeightKind, ...] = ("identity", "linear", "quadratic")


def agreement_weights(categories: npt.ArrayLike, kind: WeightKind = "identity") -> FloatArray:
    """Return the categories × categories agreement-weight matrix of ``kind``.

    Linear: w_kl = 1 − |x_k − x_l| / (x_max − x_min); quadratic: w_kl = 1 − (x_k − x_l)² / (x_max − x_min)²,
    on the category *values*. Source: Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed., §3.2,
    as implemented in irrCAC's ``linear.weights`` / ``quadratic.weights``.
    Example: ``agreement_weights([1, 2, 3], "linear")`` → ``[[1, .5, 0], [.5, 1, .5], [0, .5, 1]]``.
    """
    values = np.asarray(categories, dtype=np.float64)
    if kind == "identity":
        return np.eye(values.size)
    if kind not in WEIGHT_KINDS:
        raise ValueError(f"unknown weights {kind!r}; use one of {', '.join(WEIGHT_KINDS)}")
    span = values.max() - values.min() if values.size else 0.0
    if span == 0:
        return np.eye(values.size)
    diff = np.abs(values[:, np.newaxis] - values[np.newaxis, :]) / span
    return 1.0 - (diff if kind == "linear" else diff**2)


def tolerance_weights(categories: npt.ArrayLike, tolerance: float) -> FloatArray:
    """Return 0/1 weights that count two ratings as agreeing when they differ by at most ``tolerance``.

    ``tolerance=0`` is exact agreement, ``tolerance=1`` "within one point" on an integer scale.
    Source: the adjacent-agreement convention of rubric-scoring studies (e.g. Stemler 2004, PARE 9(4)).
    Example: ``tolerance_weights([0, 1, 2], 1)`` → ``[[1, 1, 0], [1, 1, 1], [0, 1, 1]]``.
    """
    values = np.asarray(categories, dtype=np.float64)
    diff = np.abs(values[:, np.newaxis] - values[np.newaxis, :])
    return (diff <= tolerance + 1e-9).astype(np.float64)
