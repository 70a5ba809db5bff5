"""The calibrated leaderboard's artefact reader (calibration/calibrated/checks.py) on a hand-made board: report.json
and tables.csv agree; a moved CSV estimate, a calibrated interval outside the 0–1 composite scale and a shift
interval that misses its estimate are each found. (Registered as the kind's check once the anytime board, which
clips its intervals to the scale, is merged: see the module.)"""
from __future__ import annotations

import json

from calibration.calibrated.checks import calibrated_check
from evidence.models import Snapshot

BOARD = {"models": [{
    "model": "m1",
    "judge_only": {"estimate": 0.536, "lower": 0.484, "upper": 0.589, "n": 46},
    "calibrated": {"estimate": 0.528, "lower": 0.439, "upper": 0.617, "n": 25},
    "shift": {"estimate": -0.011, "lower": -0.034, "upper": 0.013, "n": 25},
    "by_dimension": {"doctrinal": {
        "judge_only": {"estimate": 0.586, "lower": 0.40, "upper": 0.70, "n": 8},
        "calibrated": {"estimate": 0.588, "lower": 0.373, "upper": 0.803, "n": 5},
        "shift": {"estimate": -0.055, "lower": -0.157, "upper": 0.047, "n": 5}}},
    "by_tradition": {}}],
    "pairs": [{"model_a": "m1", "model_b": "m2", "estimate": 0.019, "lower": -0.118, "upper": 0.155}]}
CSV = """model,facet,value,board,estimate,lower,upper,n,lam,covered_weight
m1,overall,all,judge_only,0.536,0.484,0.589,46,,
m1,overall,all,calibrated,0.528,0.439,0.617,25,0.34,1.0
m1,overall,all,shift,-0.011,-0.034,0.013,25,0.0,1.0
m1,dimension,doctrinal,judge_only,0.586,0.4,0.7,8,,
m1,dimension,doctrinal,calibrated,0.588,0.373,0.803,5,0.29,1.0
m1,dimension,doctrinal,shift,-0.055,-0.157,0.047,5,0.0,1.0
m1 − m2,pair,adjacent,difference,0.019,-0.118,0.155,,,
"""


def _check(board: dict, csv_text: str = CSV) -> list[str]:
    files = {"json": json.dumps(board).encode(), "csv": csv_text.encode()}
    return [str(p) for p in calibrated_check(Snapshot(kind=Snapshot.Kind.CALIBRATED), files)]


def test_artefact_check_a_calibrated_board_whose_files_agree_is_clean() -> None:
    assert _check(BOARD) == []


def test_artefact_check_a_calibrated_board_with_a_moved_estimate_or_an_impossible_interval_fails() -> None:
    assert _check(BOARD, CSV.replace("m1,overall,all,calibrated,0.528", "m1,overall,all,calibrated,0.538")) == [
        "tables.csv: m1/overall:all/calibrated: value 0.538 where report.json has 0.528"]
    wide = json.loads(json.dumps(BOARD))
    wide["models"][0]["by_dimension"]["doctrinal"]["calibrated"].update(lower=-0.088, upper=1.283)
    assert any("m1/dimension:doctrinal/calibrated: interval [-0.088, 1.283] lies outside the figure's range "
               "[0.0, 1.0]" in p for p in _check(wide))
    missed = json.loads(json.dumps(BOARD))
    missed["models"][0]["shift"].update(lower=0.001, upper=0.02)
    assert any("m1/overall:all/shift: interval [0.001, 0.02] does not contain its estimate -0.011" in p
               for p in _check(missed))
