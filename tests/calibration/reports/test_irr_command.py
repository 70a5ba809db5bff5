"""``manage.py irr``: Krippendorff (2011) through the command, grouped reports, and bad files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

DATA = Path(__file__).parent.parent / "data"
KRIPPENDORFF_2011_CSV = DATA / "krippendorff2011.csv"  # Krippendorff (2011), 4 observers × 12 units, long format
GROUPED_CSV = DATA / "grouped.csv"
REPO = Path(__file__).resolve().parents[3]

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
        ("unit,rater,grade\nu1,A,1\n", (), r"empty.csv, line 1: wrong header: expected the columns item,rater,score; found: unit,rater,grade — no column for score \(or value, rating\)"),
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


def test_irr_two_raters_with_non_integer_values_gives_an_interval_for_every_defined_coefficient(tmp_path):
    # Issue 12's acceptance: two raters, values such as 1.5 and 2.25, exit 0, every defined coefficient has an interval.
    rows = [("u1", 1.5, 2.25), ("u2", 2.25, 2.25), ("u3", 3, 1.5), ("u4", 0.5, 0.75), ("u5", 3, 3), ("u6", 1.5, 2.25),
            ("u7", 0.5, 1.5), ("u8", 2.25, 3), ("u9", 0.75, 0.5), ("u10", 3, 2.25), ("u11", 1.5, 1.5), ("u12", 2.25, 3)]
    path = tmp_path / "two.csv"
    path.write_text("unit,rater,value\n" + "".join(f"{u},a,{a}\n{u},b,{b}\n" for u, a, b in rows))
    done = subprocess.run(
        [sys.executable, "manage.py", "irr", str(path), "--format", "json", "--seed", "4", "--bootstrap", "300"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    values = {
        **{k: report[k] for k in ("krippendorff_alpha", "percent_agreement", "within_one_agreement", "fleiss_kappa",
                                  "gwet_ac1", "spearman_rho", "kendall_tau_b")},
        "gwet_ac2_linear": report["gwet_ac2"]["linear"], "gwet_ac2_quadratic": report["gwet_ac2"]["quadratic"],
        **{f"cohen_kappa_{k}": v for k, v in report["cohen_kappa"].items()},
        "icc_2_1": report["icc_2_1"], "icc_3_1": report["icc_3_1"],
    }
    assert set(report["intervals"]) == set(values)
    for name, value in values.items():
        entry = report["intervals"][name]
        assert value is not None, name
        method = ("F",) if name.startswith("icc") else ("percentile", "bca")
        assert entry["low"] < entry["high"] and entry["method"] in method, name


def test_diagnostics_flag_the_rater_who_scores_higher_and_summarise_the_judge(tmp_path: Path) -> None:
    """Known truth: raters A–C give the unit's true score ± nothing; D (the judge) gives it + 1 on every unit."""
    truth = [0, 1, 2, 3, 1, 2, 0, 3, 2, 1, 0, 2]
    noise = {"A": [0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0], "B": [0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, 0],
             "C": [1, 0, 0, -1, 0, 0, 0, 1, 0, 0, 0, -1], "D": [1] * 12}
    lines = ["unit,rater,value"] + [f"u{u},{r},{truth[u] + noise[r][u]}" for u in range(12) for r in "ABCD"]
    path = tmp_path / "panel.csv"
    path.write_text("\n".join(lines) + "\n")
    report = json.loads(run_irr(str(path), "--level", "interval", "--diagnostics", "--judge", "D",
                                "--seed", "1", "--bootstrap", "200", "--format", "json"))
    raters = report["diagnostics"]["raters"]
    assert raters["D"]["flagged"] and raters["D"]["low"] > 0.5
    assert not any(raters[r]["flagged"] for r in "ABC")
    # D minus the mean of A–C on each unit: 1 − mean(noise of A–C), averaged over the units (hand-computed).
    expected = sum(1 - (noise["A"][u] + noise["B"][u] + noise["C"][u]) / 3 for u in range(12)) / 12
    assert raters["D"]["mean_difference"] == pytest.approx(expected)
    assert raters["D"]["alpha_without"] == pytest.approx(report["leave_one_rater_out"][3]["alpha_without"])
    assert sum(raters["A"]["shares"].values()) == pytest.approx(1.0)
    judge = report["diagnostics"]["judge"]
    assert judge["rater"] == "D" and judge["n_units"] == 12 and judge["mean_difference"] > 0.5
    table = run_irr(str(path), "--level", "interval", "--diagnostics", "--judge", "D", "--seed", "1",
                    "--bootstrap", "0")
    assert "D !" in table and "judge D − median" in table


def test_icc_and_intervals_for_a_two_rater_continuous_file(tmp_path: Path) -> None:
    path = tmp_path / "pair.csv"
    a = [1.5, 2.25, 3, 1, 2, 2.5, 1.25, 3.5, 0.5, 2, 1.75, 2.75]
    b = [1.5, 2.5, 2.75, 1.25, 2, 2.25, 1, 3.25, 0.75, 2.5, 1.5, 3]
    path.write_text("unit,rater,value\n" + "".join(f"u{i},A,{x}\nu{i},B,{y}\n" for i, (x, y) in enumerate(zip(a, b, strict=True))))
    report = json.loads(run_irr(str(path), "--level", "interval", "--seed", "2", "--format", "json"))
    for key in ("icc_2_1", "icc_3_1"):
        assert report[key] is not None and report["intervals"][key]["method"] == "F"
        assert report["intervals"][key]["low"] < report[key] < report["intervals"][key]["high"]
    assert any("distinct values" in w for w in report["warnings"])


def test_irr_on_1000_units_of_continuous_two_rater_scores_prints_alpha_with_a_bootstrap_interval(tmp_path: Path) -> None:
    """Issue 25: 2,000 distinct values made the coincidence form ask for 29.8 GiB; now α and its interval come from
    per-unit sums. α is checked against the definition written out pair by pair (the package cannot run here)."""
    rng = np.random.default_rng(25)
    pair = np.round(rng.normal(size=(1, 1000)) + rng.normal(scale=0.8, size=(2, 1000)), 6)
    path = tmp_path / "continuous.csv"
    path.write_text("unit,rater,value\n" + "".join(f"u{u},A,{float(pair[0, u])!r}\nu{u},B,{float(pair[1, u])!r}\n"
                                                   for u in range(1000)))
    report = json.loads(run_irr(str(path), "--level", "interval", "--seed", "1", "--format", "json"))
    pooled = pair.ravel()
    definition = 1.0 - (pooled.size - 1.0) * (2.0 * (pair[0] - pair[1]) ** 2).sum() \
        / ((pooled[:, None] - pooled[None, :]) ** 2).sum()
    assert report["krippendorff_alpha"] == pytest.approx(definition, abs=1e-9)
    low, high = report["alpha_ci"]
    assert low < report["krippendorff_alpha"] < high and high - low < 0.15
    assert report["intervals"]["krippendorff_alpha"]["low"] == low
    assert report["bootstrap"]["n_resamples"] == 1000
    table = run_irr(str(path), "--level", "interval", "--seed", "1")
    line = next(row for row in table.splitlines() if "Krippendorff's alpha" in row)
    assert f"{report['krippendorff_alpha']:.3f}" in line and f"{low:.3f}" in line
