"""Published worked examples the stats tests compare against, each with its source."""
from __future__ import annotations

import numpy as np

nan = np.nan

# Krippendorff, K. (2011) "Computing Krippendorff's Alpha-Reliability", Annenberg School for Communication
# Departmental Papers 43, the worked example "C. Nominal data, any number of observers, missing data"
# (reliability data matrix of observers A–D × units 1–12, '.' = missing) and its continuation for the
# ordinal, interval and ratio metrics in the same paper. Published α: nominal .743, ordinal .815,
# interval .849, ratio .797 (page numbers differ between the paper's revisions and were not checked; the
# transcription is verified by reproducing all four values). Unit 12 has one value only and is not
# pairable; n.. = 40 pairable values.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Gwet, K. L. (2014) Handbook of Inter-Rater Reliability, 4th ed., p. 120, shipped as irrCAC's
# `cac.raw4raters` (R package irrCAC 1.0, README / vignette "overview"): 12 units × 4 raters, categories
# 1–5. Same ratings as Krippendorff (2011) except that unit 12's single rating sits with rater 3.
# Published (irrCAC README, `pa.coeff.raw`, `gwet.ac1.raw`, `fleiss.kappa.raw`, `krippen.alpha.raw`):
# percent agreement 0.8181818, AC1 0.77544 (pe 0.1903212), Fleiss' kappa 0.76117, Krippendorff's α 0.74342.
# Quadratic weights (irrCAC vignette "weighting", section "Weighting for a dataset of raw ratings"):
# weighted pa 0.9753788, AC2 0.914 (pe 0.7137044).
# Linear weights: AC2 0.859 — from the test suite of the Python port afergadis/irrCAC
# (test/unit/irrCAC/raw/test_gwet.py, test_gwet_raw4raters_linear_weights), not from Gwet's own output.
CAC_RAW4RATERS = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)

# irrCAC's `distrib.6raters` (source given there: Fleiss, J. L. 1971, "Measuring nominal scale agreement
# among many raters", Psychological Bulletin 76:378–382): 15 patients × 6 psychiatrists × 5 diagnoses,
# as counts. Published (irrCAC README): Fleiss' kappa 0.4139265, AC1 0.4448007; quadratic weights on 1:5
# (irrCAC vignette "weighting"): AC2 0.4837438.
DISTRIB_6RATERS = np.array(
    [
        [0, 0, 0, 6, 0],
        [0, 3, 0, 0, 3],
        [0, 1, 4, 0, 1],
        [0, 0, 0, 0, 6],
        [0, 3, 0, 3, 0],
        [2, 0, 4, 0, 0],
        [0, 0, 4, 0, 2],
        [2, 0, 3, 1, 0],
        [2, 0, 0, 4, 0],
        [0, 0, 0, 0, 6],
        [1, 0, 0, 5, 0],
        [1, 1, 0, 4, 0],
        [0, 3, 3, 0, 0],
        [1, 0, 0, 5, 0],
        [0, 2, 0, 3, 1],
    ]
)

# Wikipedia, "Fleiss' kappa", section "Worked example": 10 subjects × 14 raters × 5 categories (counts);
# P̄ = 0.378, P̄e = 0.213, κ = 0.210.
FLEISS_WIKIPEDIA = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Wikipedia, "Cohen's kappa", section "Simple example": 50 grant proposals, both "yes" 20, A yes / B no 5,
# A no / B yes 10, both "no" 15; p_o = 0.7, p_e = 0.5, κ = 0.4.
COHEN_WIKIPEDIA_TABLE = np.array([[20, 5], [10, 15]])

# irrCAC's `cont3x3abstractors` (Gwet 2014; 100 pregnant women classified by two abstractors as Ectopic,
# AIU, NIU). Published (irrCAC README): Cohen's kappa 0.7964094; irrCAC vignette "weighting", section
# "Weighting ratings from a contingency table", quadratic weights: 0.8921569. Linear weights 0.843 from
# afergadis/irrCAC test/unit/irrCAC/table/test_cohen.py (secondary source).
CONT3X3_ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])


def table_to_ratings(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expand a two-rater contingency table (rows: rater A's category, columns: B's) into rating vectors."""
    a: list[int] = []
    b: list[int] = []
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            a += [i] * int(table[i, j])
            b += [j] * int(table[i, j])
    return np.array(a, dtype=float), np.array(b, dtype=float)
