"""The reliability matrix shared by every coefficient: raters × units, float, ``np.nan`` for a missing rating.

This is the convention of the ``krippendorff`` package (Castro, ``krippendorff.alpha(reliability_data=...)``):
row ``i`` holds rater ``i``'s ratings, column ``u`` unit ``u``'s. Values are category codes (0–3 on the
FaithBench scale) but any finite numbers work. Most coefficients only need the *distribution of raters by
unit and category* (Gwet 2014, §2.3 "raw ratings" → "distribution of raters"), an ``units × categories``
table of counts, which :func:`value_counts` builds once.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class UndefinedCoefficientError(ValueError):
    """A coefficient has no value for these data (e.g. no pairable unit, or one category only); says why."""


def as_reliability_matrix(data: npt.ArrayLike) -> FloatArray:
    """Return ``data`` as a 2-D float raters × units array, rejecting infinities.

    Source: the ``krippendorff`` package's ``reliability_data`` convention (np.nan = missing).
    Example: ``as_reliability_matrix([[1, 2], [1, np.nan]]).shape == (2, 2)``.
    """
    matrix = np.asarray(data, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"a reliability matrix is raters × units (2-D); got {matrix.ndim}-D data")
    if np.isinf(matrix).any():
        raise ValueError("the reliability matrix contains an infinite value; use np.nan for a missing rating")
    return matrix


def matrix_from_triples(
    triples: Iterable[tuple[Hashable, Hashable, float]], rows: Sequence[Hashable], columns: Sequence[Hashable]
) -> FloatArray:
    """A rows × columns float matrix from (row key, column key, value) triples; ``np.nan`` where none is given.

    Triples whose keys are not among ``rows``/``columns`` are left out; a repeated pair keeps the last value.
    Example: ``matrix_from_triples([("a", 1, 2.0)], ["a", "b"], [1, 2])`` → ``[[2, nan], [nan, nan]]``.
    """
    row = {key: i for i, key in enumerate(rows)}
    column = {key: j for j, key in enumerate(columns)}
    matrix = np.full((len(rows), len(columns)), np.nan)
    for r, c, value in triples:
        if r in row and c in column:
            matrix[row[r], column[c]] = value
    return matrix


def resolve_categories(matrix: FloatArray, categories: Sequence[float] | npt.ArrayLike | None = None) -> FloatArray:
    """Return the sorted category set; every observed value must be one of ``categories`` when given.

    An out-of-range value raises ``ValueError`` naming it, so nothing is ever dropped silently.
    Source: irrCAC's ``categ.labels`` argument (Gwet 2014), which keeps unused categories in the analysis.
    Example: ``resolve_categories(np.array([[0., 1.]]), [0, 1, 2, 3])`` → ``array([0., 1., 2., 3.])``.
    """
    observed = np.unique(matrix[~np.isnan(matrix)])
    if categories is None:
        return observed.astype(np.float64)
    cats = np.unique(np.asarray(categories, dtype=np.float64))
    if cats.size == 0 or not np.isfinite(cats).all():
        raise ValueError("categories must be a non-empty list of finite numbers")
    outside = observed[~np.isin(observed, cats)]
    if outside.size:
        shown = ", ".join(_fmt(v) for v in outside[:5])
        raise ValueError(f"value(s) {shown} not among the categories [{', '.join(_fmt(c) for c in cats)}]")
    return cats


def value_counts(matrix: FloatArray, categories: FloatArray) -> IntArray:
    """Return the units × categories table of how many raters put each unit in each category.

    Source: Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", the "values by units" matrix
    n_uc; Gwet (2014) calls it the distribution of raters r_ik.
    Example: ``value_counts(np.array([[1., 2.], [1., np.nan]]), np.array([1., 2.]))`` → ``[[2, 0], [0, 1]]``.
    """
    if categories.size == 0:
        return np.zeros((matrix.shape[1], 0), dtype=np.int64)
    # One pass per category over the raters × units matrix: no units × raters × categories temporary.
    return np.stack([(matrix == c).sum(axis=0) for c in categories], axis=1).astype(np.int64)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


MAX_CATEGORICAL_VALUES = 10  # more distinct values than this and a nominal reading of the data is suspect


def level_warnings(matrix: FloatArray, level: str) -> list[str]:
    """One-line warnings when the level of measurement does not fit the data.

    Nominal α, Cohen's κ (unweighted), Fleiss' κ and AC1 treat every distinct value as an unordered
    category; with more than ten distinct numeric values (continuous or fine-grained scores) they mostly
    measure exact ties. Example: 40 distinct values asked at the nominal level → one warning.
    """
    distinct = int(np.unique(matrix[~np.isnan(matrix)]).size)
    if distinct <= MAX_CATEGORICAL_VALUES:
        return []
    notes = [f"the data have {distinct} distinct values: Cohen's kappa (unweighted), Fleiss' kappa and AC1 treat "
             "each as an unordered category; read the interval-level alpha and ICC instead"]
    if level == "nominal":
        notes.insert(0, f"nominal alpha asked of {distinct} distinct numeric values; the interval or ordinal "
                        "level fits numeric scores")
    return notes
