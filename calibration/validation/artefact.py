"""The artefact check of a bias check (`evidence.kit.checker`; the kind is one stored JSON document, so the payload is
the file read), registered with BIAS_CHECK_KIND: α of judge runs with its interval (α ≤ 1, from at least two units),
the position check's reversal rate and first-position share with their intervals (shares in 0–1), the verbosity
check's correlations (r in −1…1) and the tradition check's mean differences with their t intervals (which hold
their mean; a t interval of a bounded score difference is not itself bounded, so no range is asserted for it)."""
from __future__ import annotations

from collections.abc import Mapping

from evidence.kit.checker import COEFFICIENT, SHARE, IntervalRule, Problem, artefact_check, payload_reading
from evidence.models import Snapshot

BIAS_CHECK_RULES = (
    IntervalRule("alpha", "alpha_ci", (float("-inf"), 1.0), n="n_units", min_n=2),
    IntervalRule("reversal_rate", "reversal_ci", SHARE, n="n_pairs"),
    IntervalRule("first_position_share", "first_position_ci", SHARE, n="n_pairs"),
    IntervalRule("r", "ci", COEFFICIENT, n="n"),
    IntervalRule("mean_difference", "ci", n="n_items"),
)


def bias_check_check(snapshot: Snapshot, files: Mapping[str, bytes], *, tree: object | None = None) -> list[Problem]:
    """A bias check's artefact check (its KindSpec.check): the stored payload (or the one being stored)."""
    return artefact_check([payload_reading(snapshot.payload if tree is None else tree, BIAS_CHECK_RULES)])
