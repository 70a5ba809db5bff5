"""The summary builder, the long-format reader and the package's independence from Django."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stats.longformat import LongFormatError, parse_long_csv
from stats.reliability import reliability_summary
from tests.stats.reference_data import KRIPPENDORFF_2011, table_to_ratings

REPO = Path(__file__).resolve().parents[2]


def test_stats_imports_without_django():
    # Every stats module, imported in a fresh interpreter with no settings configured.
    code = (
        "import importlib, pkgutil, sys, stats\n"
        "for m in pkgutil.iter_modules(stats.__path__):\n"
        "    importlib.import_module('stats.' + m.name)\n"
        "assert 'django' not in sys.modules, sorted(k for k in sys.modules if k.startswith('django'))\n"
        "print('ok')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_summary_has_every_coefficient_and_serialises_without_nan():
    summary = reliability_summary(KRIPPENDORFF_2011, level="ordinal", rater_labels=list("ABCD"), seed=1)
    assert round(summary["krippendorff_alpha"], 3) == 0.815
    assert summary["n_units"] == 12 and summary["n_raters"] == 4 and summary["n_pairable_units"] == 11
    low, high = summary["alpha_ci"]
    assert low < summary["krippendorff_alpha"] < high
    assert 0 <= summary["alpha_below_min_probability"] <= 1
    assert set(summary["gwet_ac2"]) == {"linear", "quadratic"}
    assert "cohen_kappa" not in summary  # four raters
    assert [r["rater"] for r in summary["leave_one_rater_out"]] == list("ABCD")
    json.dumps(summary, allow_nan=False)


def test_summary_reports_cohen_kappa_for_exactly_two_raters():
    a, b = table_to_ratings(np.array([[20, 5], [10, 15]]))
    summary = reliability_summary(np.vstack([a, b]), level="nominal", rater_labels=["A", "B"], n_resamples=0)
    assert round(summary["cohen_kappa"]["unweighted"], 3) == 0.4
    assert summary["cohen_kappa_raters"] == ["A", "B"]
    assert summary["alpha_ci"] is None
    assert any("bootstrap turned off" in w for w in summary["warnings"])


def test_undefined_coefficients_are_null_with_a_reason():
    summary = reliability_summary(np.full((2, 5), 3.0), categories=[0, 1, 2, 3], seed=0)
    assert summary["krippendorff_alpha"] is None and summary["alpha_ci"] is None
    assert summary["fleiss_kappa"] is None
    assert summary["cohen_kappa"]["unweighted"] is None
    assert summary["gwet_ac1"] == pytest.approx(1.0)
    text = " ".join(summary["warnings"])
    assert "alpha undefined" in text and "fleiss_kappa: undefined" in text and "cohen_kappa (unweighted)" in text
    json.dumps(summary, allow_nan=False)


def test_summary_with_one_rater_says_nothing_can_be_measured():
    summary = reliability_summary(np.array([[1.0, 2.0, 3.0]]), seed=0)
    assert summary["krippendorff_alpha"] is None and summary["percent_agreement"] is None
    assert any("fewer than two raters" in w for w in summary["warnings"])
    json.dumps(summary, allow_nan=False)


def test_long_csv_pivots_to_a_raters_by_units_matrix():
    ratings = parse_long_csv(["unit,rater,value,note", "u1,B,2,x", "u1,A,1,", "u2,A,3,", "u2,B,,"])
    (group,) = ratings.groups
    assert group.rater_ids == ["A", "B"] and group.unit_ids == ["u1", "u2"]
    np.testing.assert_array_equal(group.matrix, [[1.0, 3.0], [2.0, np.nan]])
    assert ratings.n_missing_rows == 1
    assert ratings.category_labels == [1, 2, 3]


def test_long_csv_with_text_categories_in_a_given_order():
    lines = ["unit,rater,value", "u1,A,low", "u1,B,high", "u2,A,mid", "u2,B,mid"]
    ratings = parse_long_csv(lines, level="ordinal", categories=["low", "mid", "high"])
    np.testing.assert_array_equal(ratings.groups[0].matrix, [[0.0, 1.0], [2.0, 1.0]])
    with pytest.raises(LongFormatError, match="line 2: value 'low' is not a number; at the ordinal level"):
        parse_long_csv(lines, level="ordinal")


@pytest.mark.parametrize(
    ("lines", "kwargs", "message"),
    [
        ([], {}, r"x.csv, line 1: the file is empty"),
        (["unit,rater,grade", "u1,A,1"], {}, r"x.csv, line 1: wrong header: expected the columns item,rater,score; found: unit,rater,grade"),
        (["unit,rater,value", "u1,A,1", "u1,A,2"], {}, r"x.csv, line 3: duplicate rating for unit 'u1' by rater 'A'"),
        (["unit,rater,value", "u1,A,1", "u1,B,two"], {"level": "interval"}, r"x.csv, line 3: value 'two' is not a number"),
        (["unit,rater,value", "u1,A,1", "u1,B,7"], {"categories": ["0", "1", "2", "3"]}, r"x.csv, line 3: value 7 is outside"),
        (["unit,rater,value", "u1,A,1,extra"], {}, r"x.csv, line 2: expected 3 fields"),
        (["unit,rater,value"], {}, r"x.csv, line 2: no ratings after the header"),
        (["unit,rater,value", "u1,A,1"], {"group_by": "dimension"}, r"x.csv, line 1: no column 'dimension'"),
    ],
)
def test_long_csv_problems_name_the_file_and_the_line(lines, kwargs, message):
    with pytest.raises(LongFormatError, match=message):
        parse_long_csv(lines, source="x.csv", **kwargs)


def test_long_csv_groups_allow_the_same_unit_and_rater_in_different_groups():
    lines = ["dimension,unit,rater,value", "textual,u1,A,1", "doctrinal,u1,A,2", "textual,u1,B,1"]
    ratings = parse_long_csv(lines, group_by="dimension")
    assert [g.key for g in ratings.groups] == ["doctrinal", "textual"]
