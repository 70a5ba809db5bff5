"""Issue 35, language cells: the cycle report's α per case language and the calibrated board's calibrated score per
language with its interval — tested on simulations with a known truth, then end to end on page, CSV, JSON, PDF."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.urls import reverse

from calibration.calibrated.build import InputRow, Options, calibrated_leaderboard_build
from calibration.calibrated.files import inputs_csv, inputs_csv_parse, report_pdf, tables_csv
from calibration.cycles.ratings import Rating, UnitInfo
from calibration.reports.languages import MIN_ITEMS, language_cells
from calibration.reports.render import report_csv
from calibration.reports.schema import Report
from evaluations.models import TestCase as Case
from evidence.kit.checker import PdfText
from tests.calibration.calibrated.test_calibrated_leaderboard import population

SUBS = ("a", "b", "c", "d")


def _ratings(language_items: dict[str, int], *, noise: dict[str, float], seed: int = 5
             ) -> tuple[list[Rating], dict[tuple[str, str], int], list[UnitInfo]]:
    """Three experts per item; in each language their scores are the item's true score plus noise with the given
    probability of moving one point (0: perfect agreement). The judge gives the true score."""
    rng = np.random.default_rng(seed)
    ratings, judge, units = [], {}, []
    item = 0
    for language, count in language_items.items():
        for _ in range(count):
            item += 1
            for sub in SUBS:
                unit = UnitInfo(str(item), sub, ("doctrinal", "textual")[item % 2], "catholic", "medium", language)
                units.append(unit)
                true = int(rng.integers(0, 4))
                judge[unit.key] = true
                for rater in ("R01", "R02", "R03"):
                    moved = rng.random() < noise[language]
                    score = int(np.clip(true + (rng.choice((-1, 1)) if moved else 0), 0, 3))
                    ratings.append(Rating(unit, rater, score))
    return ratings, judge, units


def test_language_cell_alpha_separates_a_noisy_language_from_an_agreeing_one() -> None:
    ratings, judge, units = _ratings({"en": 20, "es": 20}, noise={"en": 0.0, "es": 0.6})
    cells = {c.language: c for c in language_cells(ratings, judge=judge, units=units, n_resamples=300, seed=1)}
    assert set(cells) == {"en", "es"}
    en, es = cells["en"], cells["es"]
    assert en.alpha == pytest.approx(1.0) and en.n_items == 20 and en.n_units == 80 and en.n_experts == 3
    assert es.alpha is not None and es.alpha < 0.9 and es.alpha_ci[0] <= es.alpha <= es.alpha_ci[1]
    assert es.alpha_ci[1] < en.alpha  # the noisy language's whole interval is below the agreeing one
    assert en.judge_alpha == pytest.approx(1.0)  # the judge gives the truth, which the agreeing experts' majority is
    assert es.name == "Spanish" and en.words is None and es.words is None


def test_language_cell_with_too_few_items_gets_words_not_alpha() -> None:
    ratings, judge, units = _ratings({"en": 12, "ko": MIN_ITEMS - 2}, noise={"en": 0.1, "ko": 0.1})
    cells = {c.language: c for c in language_cells(ratings, judge=judge, units=units, n_resamples=100, seed=1)}
    ko = cells["ko"]
    assert ko.alpha is None and ko.judge_alpha is None and ko.alpha_ci is None
    assert "Only 3 items in Korean (ko): too few for α" in ko.words
    assert cells["en"].alpha is not None


def test_language_cells_absent_for_a_one_language_cycle() -> None:
    ratings, judge, units = _ratings({"en": 8}, noise={"en": 0.2})
    assert language_cells(ratings, judge=judge, units=units, n_resamples=50, seed=1) is None


def _two_language_rows(seed: int = 11) -> list[InputRow]:
    """The calibrated population, its responses split between English and Spanish (es-419) cases; the judge inflates
    the Spanish answers of model-1 by 0.15, so its Spanish cell's shift is clearly negative and its English one is
    not."""
    rows, _ = population(seed, models=2, per_model=1200, label_share=0.3)
    out = []
    for row in rows:
        language = "es-419" if row.response_id % 2 else "en"
        judge = row.judge
        if row.model == "model-1" and language != "en" and judge is not None:
            judge = round(min(1.0, judge + 0.15), 6)
        out.append(InputRow(**{**row.__dict__, "judge": judge, "language": language}))
    return out


def test_language_cell_calibrated_score_finds_the_judge_bias_in_one_language() -> None:
    rows = _two_language_rows()
    report = calibrated_leaderboard_build(rows, Options(n_resamples=200))
    assert report.meta.languages == ["en", "es"]
    entry = next(e for e in report.models if e.model == "model-1")
    assert entry.by_language is not None and set(entry.by_language) == {"en", "es"}
    es, en = entry.by_language["es"], entry.by_language["en"]
    assert es.shift.upper is not None and es.shift.upper < 0  # the judge over-scores the Spanish answers
    assert en.shift.lower <= 0 <= en.shift.upper  # and not the English ones
    assert es.calibrated.lower <= es.calibrated.estimate <= es.calibrated.upper and es.calibrated.n > 100
    # the cell's calibrated interval covers the Spanish truth, which the judge-only interval misses
    spanish_truth = np.average([r.expert for r in rows if r.model == "model-1" and r.language != "en"
                                and r.expert is not None])
    assert es.calibrated.lower - 0.05 <= spanish_truth <= es.calibrated.upper + 0.05
    assert es.judge_only.lower > spanish_truth


def test_language_cells_absent_from_a_one_language_board_and_files_carry_them() -> None:
    rows, _ = population(4, models=2, per_model=200)
    one = calibrated_leaderboard_build(rows, Options(n_resamples=50))
    assert all(e.by_language is None for e in one.models) and one.meta.languages == ["en"]
    assert "by_language" not in json.dumps(one.to_json())
    assert b",language," not in tables_csv(one)
    two_rows = _two_language_rows()
    two = calibrated_leaderboard_build(two_rows, Options(n_resamples=50))
    table = list(csv.DictReader(io.StringIO(tables_csv(two).decode())))
    assert {(r["facet"], r["value"]) for r in table if r["facet"] == "language"} == {("language", "en"),
                                                                                        ("language", "es")}
    text = PdfText(report_pdf(two, title="t", version=1, input_hash="x")).text()
    assert "By case language" in text
    # inputs.csv round-trips the language, and a file from before issue 35 reads as English
    assert [r.language for r in inputs_csv_parse(inputs_csv(two_rows))] == [r.language for r in two_rows]
    old = inputs_csv(rows).decode().splitlines()
    old = [",".join(line.split(",")[:-1]) for line in old]
    assert {r.language for r in inputs_csv_parse("\n".join(old).encode())} == {"en"}


def test_language_cell_report_csv_and_checker_agree() -> None:
    from calibration.reports.build import calibration_report_build
    from calibration.reports.checks import csv_reading, json_reading
    from evidence.kit.checker import artefact_check

    ratings, judge, units = _ratings({"en": 10, "es": 10, "ko": 2}, noise={"en": 0.1, "es": 0.3, "ko": 0.1})
    report = calibration_report_build(ratings, judge=judge, units=units, n_resamples=100, seed=3)
    report.languages = language_cells(ratings, judge=judge, units=units, n_resamples=100, seed=3)
    report = Report.from_json(json.loads(json.dumps(report.to_json())))  # stored and read back
    table = [r for r in csv.DictReader(io.StringIO(report_csv(report))) if r["group_kind"] == "language"]
    assert {r["group_value"] for r in table} == {"en", "es", "ko"}
    ko = [r for r in table if r["group_value"] == "ko"]
    assert all(r["value"] == "" for r in ko)  # words, no figure
    assert artefact_check([json_reading(report), csv_reading(report_csv(report).encode())],
                          reference="report.json") == []


@pytest.mark.django_db
def test_language_cell_on_the_cycle_report_page_csv_and_pdf(immediate_tasks, client) -> None:
    from tests.calibration.reports.test_report_views import compute, scored_world

    world, run = scored_world()
    catholic = list(Case.objects.filter(tradition__key="catholic").order_by("pk"))
    Case.objects.filter(pk__in=[c.pk for c in catholic[:3]]).update(language="es")
    Case.objects.filter(tradition__isnull=True).update(language="ko")
    client.force_login(world.admin)
    snapshot = compute(client, world.cycle)
    cells = {c["language"]: c for c in snapshot.payload["languages"]}
    assert set(cells) == {"en", "es", "ko"}
    assert cells["ko"]["words"] and cells["ko"]["alpha"] is None  # 2 items: words
    assert cells["es"]["n_items"] == 6 and cells["es"]["alpha"] is not None
    page = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    assert 'data-testid="language-cells"' in page and "Spanish (es)" in page and "too few for α" in page
    table = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "csv"])).content.decode()
    assert "language,es,experts,krippendorff_alpha" in table
    ratings = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "ratings"])).content.decode()
    assert ratings.splitlines()[0].endswith(",language")
    pdf = client.get(reverse("calibration:report_export", args=[world.cycle.pk, "pdf"])).content
    assert "By case language" in PdfText(pdf).text()  # and the artefact checker passed: the version is ready

    from calibration.calibrated.snapshots import calibrated_snapshot_compute, calibrated_snapshot_request

    board = calibrated_snapshot_compute(snapshot_id=calibrated_snapshot_request(
        run=run, cycle=world.cycle, requested_by=world.admin, n_resamples=100).pk)
    assert board.status == "ready", board.error
    entry = board.payload["models"][0]
    assert set(entry["by_language"]) == {"en", "es", "ko"} and board.payload["meta"]["languages"] == ["en", "es", "ko"]
    page = client.get(reverse("calibrated:board", args=[run.pk])).content.decode()
    assert 'data-testid="language-cells"' in page and "Korean (ko)" in page
