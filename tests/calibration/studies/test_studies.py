"""External rating studies: JUDGE-BENCH newsroom reproduces its published α; long CSV equals `manage.py irr`;
imports are atomic, idempotent and name the line of every problem."""
from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from calibration.models import Study, StudyRater, StudyScore
from calibration.studies.importing import StudyImportFailed, study_import
from calibration.studies.selectors import study_reliability

pytestmark = pytest.mark.django_db
NEWSROOM = Path(__file__).parent / "data" / "newsroom-scores.json"
# JUDGE-BENCH results/CoT/newsroom.json, "krippendorff_alpha" (ordinal, 420 summaries × 3 crowd-workers).
PUBLISHED_ALPHA = {"Informativeness": 0.2848732349364207, "Relevance": 0.11512128779864284,
                   "Fluency": -0.015808123685552733, "Coherence": 0.06497202567878013}


def test_judge_bench_newsroom_reproduces_the_published_alpha_per_metric() -> None:
    summary = study_import(path=NEWSROOM, study="newsroom", fmt="judge-bench")
    assert (summary.items, summary.raters, summary.scores, summary.created) == (420, 3, 420 * 3 * 4, 420 * 3 * 4)
    report = study_reliability(study=Study.objects.get(name="newsroom"), n_resamples=0)
    assert list(report["dimensions"]) == list(PUBLISHED_ALPHA)
    for metric, published in PUBLISHED_ALPHA.items():
        dimension = report["dimensions"][metric]
        assert dimension["level"] == "ordinal" and dimension["scale"] == [1.0, 5.0] and dimension["n_items"] == 420
        assert round(dimension["humans"]["krippendorff_alpha"], 3) == round(published, 3), metric
        assert abs(dimension["humans"]["krippendorff_alpha"] - published) < 1e-9, metric


def test_importing_the_same_file_twice_changes_nothing_and_a_change_is_counted() -> None:
    study_import(path=NEWSROOM, study="newsroom", fmt="judge-bench")
    again = study_import(path=NEWSROOM, study="newsroom", fmt="judge-bench")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 5040)


def hanna_like(tmp_path: Path, *, rows: int = 40, seed: int = 3) -> tuple[Path, Path]:
    """A study of 3 human raters and an LLM judge on 2 dimensions (1–5), as a long CSV, and the same rows in
    `manage.py irr`'s unit,rater,value layout."""
    rng = random.Random(seed)
    study_rows, irr_rows = [], []
    for item in range(rows):
        truth = rng.randint(1, 5)
        for dimension in ("coherence", "surprise"):
            for rater, kind in (("h1", "human"), ("h2", "human"), ("h3", "human"), ("gpt-judge", "judge")):
                if kind == "human" and rng.random() < 0.1:
                    continue  # a few missing ratings
                score = min(5, max(1, truth + rng.choice([-1, 0, 0, 1]) + (1 if kind == "judge" else 0)))
                study_rows.append(["hanna", f"story-{item}", dimension, rater, kind, score])
                if kind == "human":
                    irr_rows.append([f"story-{item}", rater, score, dimension])
    long_csv, irr_csv = tmp_path / "hanna.csv", tmp_path / "hanna-irr.csv"
    with open(long_csv, "w", newline="") as handle:
        csv.writer(handle).writerows([["study", "item", "dimension", "rater", "rater_kind", "score"], *study_rows])
    with open(irr_csv, "w", newline="") as handle:
        csv.writer(handle).writerows([["unit", "rater", "value", "dimension"], *irr_rows])
    return long_csv, irr_csv


def close(a: object, b: object) -> bool:
    """Equal, numbers to 1e-12 (the two sum in different unit orders), structures element by element."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(a - b) <= 1e-12
    return a == b


def test_a_long_csv_study_gives_the_coefficients_of_manage_py_irr(tmp_path) -> None:  # type: ignore[no-untyped-def]
    long_csv, irr_csv = hanna_like(tmp_path)
    study_import(path=long_csv, study="hanna")
    assert StudyRater.objects.get(name="gpt-judge").kind == "judge"
    report = study_reliability(study=Study.objects.get(name="hanna"), n_resamples=0)
    out = io.StringIO()
    call_command("irr", str(irr_csv), "--group-by", "dimension", "--bootstrap", "0", "--format", "json", stdout=out)
    irr = json.loads(out.getvalue())["groups"]
    keys = ("krippendorff_alpha", "percent_agreement", "fleiss_kappa", "gwet_ac1", "icc")
    for dimension in ("coherence", "surprise"):
        ours = report["dimensions"][dimension]["humans"]
        for key in keys:
            assert close(ours.get(key), irr[dimension].get(key)), (dimension, key, ours.get(key), irr[dimension].get(key))
        [judge] = report["dimensions"][dimension]["judges"]
        assert judge["rater"] == "gpt-judge" and judge["n_items"] == 40
        assert judge["mean_signed_difference"] > 0  # this judge scores half a point or so higher
        assert 0 < judge["spearman_rho"] <= 1 and 0 < judge["kendall_tau_b"] <= 1


def test_a_bad_row_anywhere_writes_nothing_and_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    long_csv, _ = hanna_like(tmp_path, rows=5)
    lines = long_csv.read_text().splitlines()
    lines[4] = lines[4].rsplit(",", 1)[0] + ",high"  # line 5 of the file: a score that is not a number
    lines[7] = lines[7].replace(",human,", ",robot,")
    long_csv.write_text("\n".join(lines) + "\n")
    with pytest.raises(StudyImportFailed) as info:
        study_import(path=long_csv, study="hanna")
    assert f"{long_csv}:5: score: must be a number, not 'high'" in info.value.errors
    assert any(e.startswith(f"{long_csv}:8: rater_kind:") for e in info.value.errors)
    assert not Study.objects.exists() and not StudyScore.objects.exists()


def test_duplicates_other_studies_and_broken_json_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "dup.csv"
    path.write_text("study,item,dimension,rater,rater_kind,score\nx,1,d,a,human,2\nx,1,d,a,human,3\ny,2,d,a,human,1\n")
    with pytest.raises(StudyImportFailed) as info:
        study_import(path=path, study="x")
    assert any(":3: score: a second score" in e and ":2" in e for e in info.value.errors)
    assert any(":4: study:" in e for e in info.value.errors)
    broken = tmp_path / "broken.json"
    broken.write_text('{"annotations": [],\n "instances": [ {"id": 1,, } ]}')
    with pytest.raises(StudyImportFailed, match=r"broken.json:2:26: invalid JSON at column 26"):
        study_import(path=broken, study="z", fmt="judge-bench")
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text('{"item": 1, "dimension": "d", "rater": "a", "rater_kind": "human", "score": 2}\n{"item": 2,\n')
    with pytest.raises(StudyImportFailed, match=r"r.jsonl:2:12: invalid JSON at column 12"):
        study_import(path=jsonl, study="z")
    assert not Study.objects.exists()


def test_wide_csv_and_the_commands(tmp_path) -> None:  # type: ignore[no-untyped-def]
    wide = tmp_path / "wide.csv"
    wide.write_text("id,ann1,ann2,ann3,llm\nA,1,2,2,3\nB,3,3,,3\nC,2,1,2,1\nD,5,4,5,5\n")
    out = io.StringIO()
    call_command("import_ratings", str(wide), "--study", "wide", "--format", "wide", "--id-column", "id",
                 "--rater-columns", "ann1,ann2,ann3,llm", "--judge-columns", "llm", "--dimension", "quality",
                 "--no-progress", stdout=out)
    assert "4 items, 4 raters, 15 scores — 15 created" in out.getvalue()
    assert StudyRater.objects.get(name="llm").kind == "judge"
    out = io.StringIO()
    call_command("study_report", "wide", "--bootstrap", "0", stdout=out)
    assert "quality (ordinal, 4 items, 3 humans): alpha" in out.getvalue() and "judge llm:" in out.getvalue()
    with pytest.raises(CommandError, match="no study named 'nope'"):
        call_command("study_report", "nope")
    with pytest.raises(CommandError, match="needs --rater-columns"):
        call_command("import_ratings", str(wide), "--study", "w2", "--format", "wide", "--no-progress")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_ratings", str(tmp_path / "missing.csv"), "--study", "w3", "--no-progress")


def test_study_report_of_1000_items_of_continuous_scores_prints_alpha_with_an_interval(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 25: 1,000 items × 2 humans of continuous scores made α ask for 29.8 GiB; now α has its interval."""
    rng = random.Random(25)
    rows = []
    for item in range(1000):
        truth = rng.gauss(0.0, 1.0)
        rows.append(f"i{item},{truth + rng.gauss(0.0, 0.8)!r},{truth + rng.gauss(0.0, 0.8)!r}\n")
    wide = tmp_path / "continuous.csv"
    wide.write_text("id,h1,h2\n" + "".join(rows))
    call_command("import_ratings", str(wide), "--study", "cont", "--format", "wide", "--id-column", "id",
                 "--rater-columns", "h1,h2", "--dimension", "quality", "--level", "interval", "--no-progress",
                 stdout=io.StringIO())
    out = io.StringIO()
    call_command("study_report", "cont", "--bootstrap", "300", "--format", "json", stdout=out)
    humans = json.loads(out.getvalue())["dimensions"]["quality"]["humans"]
    low, high = humans["alpha_ci"]
    assert low < humans["krippendorff_alpha"] < high
    assert 0.45 < humans["krippendorff_alpha"] < 0.75  # true α = 1 / (1 + 0.64) ≈ 0.61
