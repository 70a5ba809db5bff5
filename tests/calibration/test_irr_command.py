"""``manage.py irr``: Krippendorff (2011) through the command, grouped reports, and bad files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

DATA = Path(__file__).parent / "data"
KRIPPENDORFF_2011_CSV = DATA / "krippendorff2011.csv"  # Krippendorff (2011), 4 observers × 12 units, long format
GROUPED_CSV = DATA / "grouped.csv"
REPO = Path(__file__).resolve().parents[2]

# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", the 4 × 12 example with missing data.
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def run_irr(*args: str) -> str:
    out = StringIO()
    call_command("irr", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("level", list(PUBLISHED))
def test_irr_json_reproduces_krippendorff_2011(level):
    report = json.loads(run_irr(str(KRIPPENDORFF_2011_CSV), "--level", level, "--format", "json", "--bootstrap", "200", "--seed", "1"))
    assert round(report["krippendorff_alpha"], 3) == PUBLISHED[level]
    assert report["level"] == level
    assert (report["n_units"], report["n_raters"], report["n_pairable_units"]) == (12, 4, 11)
    low, high = report["alpha_ci"]
    assert low <= report["krippendorff_alpha"] <= high
    for key in ("alpha_below_min_probability", "percent_agreement", "fleiss_kappa", "gwet_ac1", "gwet_ac2", "warnings"):
        assert key in report
    assert "cohen_kappa" not in report  # four raters


@pytest.mark.parametrize("level", list(PUBLISHED))
def test_irr_table_prints_krippendorff_2011(level):
    text = run_irr(str(KRIPPENDORFF_2011_CSV), "--level", level, "--bootstrap", "0")
    line = next(row for row in text.splitlines() if "Krippendorff's alpha" in row)
    assert f"({level})" in line and f"{PUBLISHED[level]:.3f}" in line


def test_irr_json_is_reproducible_with_a_seed_and_has_the_published_companions():
    args = (str(KRIPPENDORFF_2011_CSV), "--format", "json", "--seed", "7", "--bootstrap", "300")
    first, second = json.loads(run_irr(*args)), json.loads(run_irr(*args))
    assert first["alpha_ci"] == second["alpha_ci"]
    # Same ratings as irrCAC's cac.raw4raters: percent agreement 0.8181818, Fleiss' kappa 0.76117 (irrCAC README).
    assert first["percent_agreement"] == pytest.approx(0.8181818, abs=5e-8)
    assert first["fleiss_kappa"] == pytest.approx(0.76117, abs=5e-6)


def test_irr_groups_report_each_group_with_nulls_and_warnings_instead_of_nan():
    raw = run_irr(str(GROUPED_CSV), "--group-by", "dimension", "--format", "json", "--seed", "3", "--bootstrap", "200")
    assert "NaN" not in raw
    report = json.loads(raw)
    assert report["group_by"] == "dimension"
    groups = report["groups"]
    assert sorted(groups) == ["doctrinal", "historical", "textual"]
    assert round(groups["textual"]["krippendorff_alpha"], 3) == 0.815
    # Wikipedia "Cohen's kappa" example (20/5/10/15) → κ = 0.4; exactly two raters, so Cohen's κ is reported.
    assert round(groups["doctrinal"]["cohen_kappa"]["unweighted"], 3) == 0.400
    assert set(groups["doctrinal"]["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}
    historical = groups["historical"]  # every rating is 2
    assert historical["krippendorff_alpha"] is None and historical["alpha_ci"] is None
    assert historical["fleiss_kappa"] is None and historical["cohen_kappa"]["unweighted"] is None
    assert any("alpha undefined" in w for w in historical["warnings"])


def test_irr_table_shows_groups_and_warnings():
    text = run_irr(str(GROUPED_CSV), "--group-by", "dimension", "--bootstrap", "0")
    assert "[dimension = historical]" in text and "[dimension = textual]" in text
    assert "alpha undefined" in text and "n/a" in text


def test_irr_strata_and_min_alpha_reach_the_bootstrap(tmp_path):
    path = tmp_path / "strata.csv"
    rows = ["unit,rater,value,dimension"]
    for unit in range(40):
        for rater in "ABC":
            value = (unit + (rater == "C" and unit % 5 == 0)) % 4
            rows.append(f"u{unit},{rater},{value},{'textual' if unit < 20 else 'doctrinal'}")
    path.write_text("\n".join(rows) + "\n")
    report = json.loads(run_irr(str(path), "--strata", "dimension", "--format", "json", "--seed", "1", "--min-alpha", "0.9", "--bootstrap", "300"))
    assert report["bootstrap"]["n_strata"] == 2 and report["min_alpha"] == 0.9
    assert 0 <= report["alpha_below_min_probability"] <= 1


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("", (), r"empty.csv, line 1: the file is empty"),
        ("unit,rater,score\nu1,A,1\n", (), r"empty.csv, line 1: missing column\(s\) value"),
        ("unit,rater,value\nu1,A,1\nu1,B,2\nu1,A,3\n", (), r"empty.csv, line 4: duplicate rating for unit 'u1' by rater 'A' \(first given on line 2\)"),
        ("unit,rater,value\nu1,A,1\nu1,B,high\n", ("--level", "interval"), r"empty.csv, line 3: value 'high' is not a number \(the interval level needs numbers\)"),
        ("unit,rater,value\nu1,A,1\nu1,B,-2\n", ("--level", "ratio"), r"empty.csv, line 3: negative value -2 at the ratio level"),
        ("unit,rater,value\nu1,A,1\nu1,B,4\n", ("--categories", "0,1,2,3"), r"empty.csv, line 3: value 4 is outside the categories 0, 1, 2, 3"),
    ],
)
def test_irr_bad_files_raise_one_clear_line(tmp_path, content, args, message):
    path = tmp_path / "empty.csv"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run_irr(str(path), *args)


def test_irr_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run_irr(str(tmp_path / "absent.csv"))


def test_irr_through_manage_py_exits_non_zero_with_one_line(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("unit,rater,value\nu1,A,1\nu1,A,2\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "manage.py", "irr", str(path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "dup.csv, line 3: duplicate rating" in lines[0]
