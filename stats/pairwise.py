"""Cohen's κ for every pair of raters at once, from one pairwise confusion-count tensor (pure numpy).

A panel of R raters has R (R − 1) / 2 pairs; calling :func:`stats.kappa.cohen_kappa` (scikit-learn) once
per pair costs a few hundred microseconds of input validation each, which dominates a report with dozens
of raters and groups. Here the rating matrix becomes a one-hot tensor X (raters × units × categories, all
zeros for a missing rating) and one matrix product gives every pair's confusion counts over the units both
rated: C[a, b, k, l] = Σ_u X[a, u, k] X[b, u, l]. κ then follows for all pairs with array arithmetic.

κ_w = 1 − Σ_kl v_kl o_kl / Σ_kl v_kl e_kl (Cohen 1968, Psychological Bulletin 70:213–220), with o the
confusion counts, e_kl = o_k. o_.l / n the counts expected by chance, and disagreement weights v on the
category VALUES x: unweighted v = [k ≠ l], linear v = |x_k − x_l|, quadratic v = (x_k − x_l)². With
unweighted v it is Cohen's (1960) κ = (p_o − p_e) / (1 − p_e). For equally spaced codes such as 0–3 the
value weights equal scikit-learn's position weights (κ_w does not change when v is multiplied by a
constant), so the numbers are those of ``sklearn.metrics.cohen_kappa_score`` with ``labels=categories``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from stats.matrix import FloatArray, IntArray, as_reliability_matrix, resolve_categories

KappaWeights = Literal["linear", "quadratic"] | None


def pairwise_confusion(matrix: npt.ArrayLike, categories: Sequence[float]) -> IntArray:
    """Return the R × R × V × V counts C[a, b, k, l] of units that rater a put in k and rater b in l.

    Only units both raters rated count; ``C[a, b].sum()`` is their number of common units and
    ``C[a, b] == C[b, a].T``. The category axes follow the sorted distinct ``categories``. Every rated value must be one of ``categories`` (ValueError otherwise).
    Source: the two-rater contingency table of Cohen (1960), built for all pairs by one product of the
    one-hot ratings. Example: ``pairwise_confusion([[0, 1], [0, 0]], [0, 1])[0, 1]`` → ``[[1, 0], [1, 0]]``.
    """
    data = as_reliability_matrix(matrix)
    cats = resolve_categories(data, categories)
    n_raters, n_units = data.shape
    # Sums of 0/1 products are exact in float32 up to 2**24 units (float64 beyond): BLAS does the counting.
    dtype = np.float32 if n_units < 2**24 else np.float64
    onehot = (data[:, np.newaxis, :] == cats[np.newaxis, :, np.newaxis]).astype(dtype)  # R × V × U
    flat = onehot.reshape(n_raters * cats.size, n_units)
    counts = np.rint(flat @ flat.T).astype(np.int64).reshape(n_raters, cats.size, n_raters, cats.size)
    return counts.transpose(0, 2, 1, 3)


def disagreement_weights(categories: Sequence[float], weights: KappaWeights = None) -> FloatArray:
    """Return Cohen's (1968) disagreement weights v_kl on the category values: [k ≠ l], |x_k − x_l| or (x_k − x_l)².

    Source: Cohen (1968) weighted κ; the linear and quadratic forms of Fleiss & Cohen (1973).
    Example: ``disagreement_weights([0, 1, 3], "linear")`` → ``[[0, 1, 3], [1, 0, 2], [3, 2, 0]]``.
    """
    values = np.asarray(categories, dtype=np.float64)
    diff = values[:, np.newaxis] - values[np.newaxis, :]
    if weights is None:
        return (diff != 0).astype(np.float64)
    if weights == "linear":
        return np.abs(diff)
    if weights == "quadratic":
        return diff**2
    raise ValueError(f"unknown weights {weights!r}; use None, 'linear' or 'quadratic'")


def cohen_kappa_from_confusion(
    confusion: npt.ArrayLike, categories: Sequence[float], weights: KappaWeights = None
) -> FloatArray:
    """Return κ for one (V × V) or a stack (… × V × V) of confusion-count tables; NaN where κ is undefined.

    Undefined: no unit in the table, or chance disagreement Σ v e = 0 (both raters used one and the same
    category throughout). κ_w = 1 − Σ v o / Σ v e, e = outer(row sums, column sums) / n (Cohen 1968).
    Example: the 2 × 2 table 20/5/10/15 (Wikipedia "Cohen's kappa") → 0.4.
    """
    counts = np.asarray(confusion, dtype=np.float64)
    v = disagreement_weights(categories, weights)
    if counts.shape[-2:] != v.shape:
        raise ValueError(f"confusion tables must be {v.shape[0]} × {v.shape[0]} for these categories")
    n = counts.sum(axis=(-2, -1))
    rows = counts.sum(axis=-1)
    columns = counts.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, np.newaxis] * columns[..., np.newaxis, :] / n[..., np.newaxis, np.newaxis]
        observed_disagreement = (v * counts).sum(axis=(-2, -1))
        chance_disagreement = (v * expected).sum(axis=(-2, -1))
        kappa = 1.0 - observed_disagreement / chance_disagreement
    return np.where((n > 0) & (chance_disagreement > 0), kappa, np.nan)


def pairwise_cohen_kappa(
    matrix: npt.ArrayLike, categories: Sequence[float], weights: KappaWeights = None
) -> FloatArray:
    """Return the R × R matrix of Cohen's κ between every two raters of a raters × units matrix (NaN = missing).

    Entry [a, b] uses the units both a and b rated; NaN where that κ is undefined (see
    :func:`cohen_kappa_from_confusion`). Equals :func:`stats.kappa.cohen_kappa` for each pair (to 1e-12).
    Source: Cohen (1960, 1968). Example: ``pairwise_cohen_kappa([[0, 1, 1], [0, 1, 0]], [0, 1])[0, 1]`` → 0.4.
    """
    cats = np.unique(np.asarray(categories, dtype=np.float64))
    return cohen_kappa_from_confusion(pairwise_confusion(matrix, cats.tolist()), cats.tolist(), weights)
