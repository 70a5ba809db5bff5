"""The calibrated board on anytime-valid sequences (issue 31): every interval inside the scale and never a point from
a handful of labels, shift = calibrated − judge exactly, paired differences, live verdicts, the controller, and the
bad inputs the issue names — small known-truth cases, no database."""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from calibration.calibrated.build import InputRow, Options
from calibration.calibrated.build import calibrated_leaderboard_build as build
from calibration.calibrated.files import inputs_csv, inputs_csv_parse, report_json, tables_csv
from calibration.calibrated.snapshots import margin_problem
from stats.anytime import FEW_LABELS

from .test_calibrated_leaderboard import population


def walk_intervals(report: dict) -> Iterator[tuple[str, float | None, float | None, int, dict]]:
    """Every calibrated figure of a report's JSON: (where, lower, upper, n, block) — models, cells, shifts, pairs."""
    for entry in report["models"]:
        cells = [("overall", entry), *((f"dimension {k}", c) for k, c in entry["by_dimension"].items()),
                 *((f"tradition {k}", c) for k, c in entry["by_tradition"].items())]
        for facet, cell in cells:
            for board in ("calibrated", "shift"):
                block = cell[board]
                yield f"{entry['model']} {facet} {board}", block["lower"], block["upper"], block["n"], block
        block = entry["gold_only"]
        yield f"{entry['model']} gold_only", block["lower"], block["upper"], block["n"], block
    for pair in report["pairs"]:
        yield f"{pair['model_a']} − {pair['model_b']}", pair["lower"], pair["upper"], pair["verdict"]["looks"], pair


def interval_problems(report: dict) -> list[str]:
    """Intervals outside their scale (0–1; shifts and pairs −1–1) and zero-width ones from fewer than 5 labels."""
    problems = []
    for where, lower, upper, n, _ in walk_intervals(report):
        if lower is None or upper is None:
            continue
        low, high = (-1.0, 1.0) if "shift" in where or "−" in where else (0.0, 1.0)
        if lower < low - 1e-9 or upper > high + 1e-9 or lower > upper:
            problems.append(f"{where}: {lower}–{upper} outside {low}–{high}")
        if n < FEW_LABELS and upper - lower <= 1e-9:
            problems.append(f"{where}: zero width from {n} labels")
    return problems


def labelled_only(rows: list[InputRow], keep: int, *, seed: int = 0) -> list[InputRow]:
    """Keep `keep` labels per model × dimension (the first in arrival order), unlabel the rest."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in rows:
        if r.expert is not None:
            key = (r.model, r.dimension)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > keep:
                r = InputRow(**{**r.__dict__, "expert": None, "inclusion_probability": None, "inclusion_basis": "",
                                "arrival": None})
        out.append(r)
    return out


def with_arrival(rows: list[InputRow], *, seed: int = 0) -> list[InputRow]:
    rng = np.random.default_rng(seed)
    labelled = [r.response_id for r in rows if r.expert is not None]
    order = {rid: i + 1 for i, rid in enumerate(rng.permutation(labelled).tolist())}
    return [InputRow(**{**r.__dict__, "arrival": order.get(r.response_id)}) for r in rows]


@pytest.mark.parametrize("keep", [1, 2, 3, 4, 7])
def test_small_sample_cells_stay_on_the_scale_and_never_collapse(keep: int) -> None:
    rows, _ = population(models=3, per_model=120, label_share=0.5)
    report = build(labelled_only(with_arrival(rows), keep), Options(n_resamples=0)).to_json()
    assert interval_problems(report) == []
    for where, lower, upper, n, block in walk_intervals(report):
        if "dimension" in where and "calibrated" in where:
            assert n == keep
            if keep < FEW_LABELS:
                assert block["status"] == "few_labels" and "valid but wide" in block["words"]
                assert upper - lower > 0.05, where


def test_anytime_intervals_cover_the_truth_over_repeated_small_panels() -> None:
    """Known truth: 40 seeds × 3 models with 10 labels per dimension; the anytime intervals miss rarely (the
    benchmark measures ≥ 0.979 per cell), unlike a fixed-n interval tuned on the same labels."""
    hits = total = 0
    for seed in range(40):
        rows, truths = population(seed=seed, models=3, per_model=80, label_share=0.25)
        report = build(with_arrival(rows, seed=seed), Options(n_resamples=0)).to_json()
        for entry in report["models"]:
            total += 1
            c = entry["calibrated"]
            hits += c["lower"] <= truths[entry["model"]] <= c["upper"]
    assert hits / total >= 0.94


def test_anytime_shift_is_calibrated_minus_judge_only_exactly() -> None:
    rows, _ = population(models=2, per_model=300, bias={1: 0.1})
    report = build(with_arrival(rows), Options(n_resamples=100)).to_json()
    for entry in report["models"]:
        cal, judge, shift = entry["calibrated"], entry["judge_only"], entry["shift"]
        assert shift["estimate"] == pytest.approx(cal["estimate"] - judge["estimate"], abs=2e-6)
        assert shift["lower"] == pytest.approx(cal["lower"] - judge["estimate"], abs=2e-6)
        assert shift["upper"] == pytest.approx(cal["upper"] - judge["estimate"], abs=2e-6)
        assert shift["se"] == cal["se"]  # the variance budget's judge error is this very interval's
    biased = next(e for e in report["models"] if e["model"] == "model-1")
    assert biased["evidence"]["verdict"]["verdict"] == "separated"
    assert "over-scores" in biased["evidence"]["verdict"]["words"]


def test_labels_out_of_order_are_read_in_arrival_order_and_recompute_byte_for_byte() -> None:
    rows, _ = population(models=2, per_model=200)
    rows = with_arrival(rows, seed=4)
    ordered = report_json(build(rows, Options(n_resamples=50)))
    shuffled = list(reversed(rows))  # the rows arrive in another order: the arrival column decides, not the list
    assert report_json(build(shuffled, Options(n_resamples=50))) == ordered
    assert report_json(build(inputs_csv_parse(inputs_csv(rows)), Options(n_resamples=50))) == ordered
    # a different arrival order is a different sequence (the clock is the experts'): the figures may move
    other = report_json(build(with_arrival(rows, seed=5), Options(n_resamples=50)))
    assert json.loads(other)["models"][0]["calibrated"]["n"] == json.loads(ordered)["models"][0]["calibrated"]["n"]


def same_cases(seed: int = 1, cases: int = 300, share: float = 0.3, gap: float = 0.05) -> list[InputRow]:
    """Two models answering the same cases; the same cases labelled for both (as a paired draw does)."""
    rng = np.random.default_rng(seed)
    rows, rid = [], 0
    base = rng.normal(0.5, 0.12, cases)
    labelled = rng.random(cases) < share
    order = {c: i + 1 for i, c in enumerate(rng.permutation(cases).tolist())}
    for m, shift in ((0, gap), (1, 0.0)):
        for c in range(cases):
            rid += 1
            truth = float(np.clip(base[c] + shift + rng.normal(0, 0.03), 0, 1))
            judge = float(np.clip(truth + rng.normal(0, 0.05), 0, 1))
            rows.append(InputRow(
                response_id=rid, model=f"m{m}", family="f", dimension=("a", "b")[c % 2], tradition="none",
                difficulty=("easy", "hard")[c % 2], judge=round(judge, 6),
                expert=round(truth, 6) if labelled[c] else None, expert_gold=None,
                inclusion_probability=share if labelled[c] else None, inclusion_basis="drawn" if labelled[c] else "",
                n_raters=2, arrival=2 * order[c] + m if labelled[c] else None, case=c))
    return rows


def test_paired_difference_is_used_for_the_same_cases_and_is_narrower() -> None:
    rows = same_cases()
    paired = build(rows, Options(n_resamples=0)).pairs[0]
    unpaired = build([InputRow(**{**r.__dict__, "case": None}) for r in rows], Options(n_resamples=0)).pairs[0]
    assert paired.paired is True and unpaired.paired is False
    assert paired.upper - paired.lower < 0.85 * (unpaired.upper - unpaired.lower)  # per-case differences: cases cancel
    assert paired.verdict is not None and paired.verdict.verdict == "separated" and paired.verdict.leader == "m0"
    assert paired.verdict.looks == sum(1 for r in rows if r.model == "m0" and r.expert is not None)


def test_paired_difference_of_equal_models_is_not_separated_while_the_judge_only_board_would_differ() -> None:
    rows = same_cases(gap=0.0)
    rows = [InputRow(**{**r.__dict__, "judge": min(1.0, r.judge + 0.1)}) if r.model == "m0" else r for r in rows]
    report = build(rows, Options(n_resamples=0))
    pair = report.pairs[0]
    assert pair.verdict is not None and pair.verdict.verdict != "separated"
    assert pair.advice is not None and (pair.verdict.verdict == "equivalent" or pair.advice.lever != "none")


def test_a_pair_that_needs_labels_gets_a_forecast_and_a_lever() -> None:
    rows = same_cases(cases=60, share=0.3, gap=0.08)  # a gap the sequence can still reach (see the forecast test)
    pair = build(rows, Options(n_resamples=0)).pairs[0]
    assert pair.verdict is not None and pair.verdict.verdict == "continue"
    assert pair.advice is not None and pair.advice.lever == "labels"
    assert pair.more_labels_each is not None and pair.more_labels_each > 0
    assert "m0" in pair.advice.where[0] and "same cases" in pair.advice.where[0]


def test_panel_noise_dominating_the_residual_advises_more_experts_per_item() -> None:
    rows, _ = population(models=1, per_model=200, label_share=0.3)
    noisy = [InputRow(**{**r.__dict__, "panel_var": 0.01 if r.expert is not None else None}) for r in rows]
    quiet = [InputRow(**{**r.__dict__, "panel_var": 1e-6 if r.expert is not None else None}) for r in rows]
    narrow = Options(n_resamples=0, margin=0.01)  # a tight margin: no verdict yet on 60 labels
    loud = build(noisy, narrow).models[0].evidence.advice
    calm = build(quiet, narrow).models[0].evidence.advice
    assert loud is not None and calm is not None
    assert loud.lever == "experts" and "panel noise" in loud.words
    assert calm.lever == "labels"


BAD_INPUTS: dict[str, Any] = {}


def _bad(name: str) -> list[InputRow]:
    rows, _ = population(models=2, per_model=60, label_share=0.3)
    if name == "no labels":
        return [InputRow(**{**r.__dict__, "expert": None, "inclusion_probability": None, "inclusion_basis": ""})
                for r in rows]
    if name == "one label":
        return labelled_only(rows, 0) + [InputRow(**{**rows[0].__dict__, "response_id": 10**6, "expert": 0.5,
                                                    "inclusion_probability": 0.3, "inclusion_basis": "drawn"})]
    if name == "constant judge":
        return [InputRow(**{**r.__dict__, "judge": 0.5}) for r in rows]
    if name == "one stratum":
        return [InputRow(**{**r.__dict__, "expert": None, "inclusion_probability": None, "inclusion_basis": ""})
                if r.dimension != "doctrinal" else r for r in rows]
    if name == "pi one":
        return [InputRow(**{**r.__dict__, "inclusion_probability": 1.0}) if r.expert is not None else r for r in rows]
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["no labels", "one label", "constant judge", "one stratum", "pi one"])
def test_anytime_bad_input_gives_words_never_nan(name: str) -> None:
    report = build(_bad(name), Options(n_resamples=20))
    text = report_json(report).decode()  # allow_nan=False: a NaN would raise
    assert "NaN" not in text and "Infinity" not in text
    assert "nan" not in tables_csv(report).decode().lower().replace("nana", "")
    tree = json.loads(text)
    assert interval_problems(tree) == []
    for entry in tree["models"]:
        c = entry["calibrated"]
        if c["estimate"] is None:
            assert c.get("words") or c.get("note")
        assert entry["evidence"]["verdict"]["words"]
    if name == "constant judge":
        assert "constant judge" in tree["models"][0]["calibrated"]["words"]
    if name == "pi one":
        assert "π = 1" in tree["models"][0]["calibrated"]["words"]


@pytest.mark.parametrize("margin", [0.0, -0.1, 1.0, 2.5, math.nan])
def test_a_bad_margin_is_refused_in_words(margin: float) -> None:
    assert margin_problem(margin)
    rows, _ = population(models=2, per_model=60)
    report = build(rows, Options(n_resamples=0, margin=margin))
    assert all(p.verdict is not None and p.verdict.verdict == "invalid" and "margin" in p.verdict.words
               for p in report.pairs)
    report_json(report)  # still no NaN


def test_a_good_margin_is_accepted() -> None:
    assert margin_problem(0.05) is None and margin_problem(0.5) is None


def test_enough_never_shows_without_a_verdict() -> None:
    """Over many small boards: a meter says 0 more labels (enough) exactly when its verdict is reached."""
    for seed in range(6):
        rows, _ = population(seed=seed, models=3, per_model=60, label_share=0.3)
        report = build(with_arrival(rows, seed=seed), Options(n_resamples=0)).to_json()
        meters = [e["evidence"] for e in report["models"]]
        meters += [c["evidence"] for e in report["models"] for c in [*e["by_dimension"].values(),
                                                                      *e["by_tradition"].values()]]
        for meter in meters:
            settled = meter["verdict"]["verdict"] in ("separated", "equivalent")
            assert (meter["more_labels"] == 0) == settled, meter
        for pair in report["pairs"]:
            settled = pair["verdict"]["verdict"] in ("separated", "equivalent")
            assert (pair["more_labels_each"] == 0) == settled, pair


def test_a_schema_1_version_still_reads_and_renders() -> None:
    """Versions stored before issue 31 (no verdicts, advice or status) keep opening: the new keys are optional."""
    import gzip
    from pathlib import Path

    from calibration.calibrated.render import board_rows, cell_rows, interval_axis, pair_rows
    from calibration.calibrated.schema import CalibratedReport

    path = Path(__file__).resolve().parents[1] / "data" / "demo_golden" / "calibrated.json.gz"
    payload = json.loads(gzip.decompress(path.read_bytes()))
    payload["schema"] = 1
    for entry in payload["models"]:  # strip what schema 2 added, if the recording is newer
        entry["evidence"].pop("verdict", None)
        entry["evidence"].pop("advice", None)
    report = CalibratedReport.from_json(payload)
    rows = board_rows(report, interval_axis(report))
    assert rows and all(row.verdict == "" for row in rows)
    assert cell_rows(report, "by_dimension") and isinstance(pair_rows(report), list)
