"""The demo's evidence does not move when the code is rearranged: every number of the demo cycle report's and the
demo calibrated leaderboard's JSON and CSV equals the files recorded before the architecture step (issue 24).

The demo is loaded into a database of its own, through the same commands an operator uses (`migrate`,
`load_demo`, `report … --format`, `calibrated_leaderboard … --format`), in a child process — so the test reads
the product from the outside and survives any move of the code behind those commands. The recorded files live in
tests/calibration/data/demo_golden/ (made on main at accdb46 with `manage.py load_demo` and the same exports).

When a change is *meant* to move a number, regenerate the files with the commands in `_exports` and say why in
the commit; the test then prints what moved.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.golden

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "data" / "demo_golden"
DEMO_CYCLE = "Demo cycle 1"
CALIBRATED_RUN = "1"  # the demo's first judge run: its calibrated leaderboard is computed by load_demo

# Fields that name when or with what software a file was made, not what it measured.
VOLATILE = {"requested_at", "software", "generated_at", "finished_at", "computed_at"}


def _numbers(value: object, path: str = "") -> dict[str, float | int]:
    """Every number in a JSON tree by its path (`groups[3].metrics.alpha.value`); booleans are not numbers."""
    found: dict[str, float | int] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in VOLATILE:
                found.update(_numbers(item, f"{path}.{key}" if path else str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.update(_numbers(item, f"{path}[{index}]"))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        found[path] = value
    return found


def _same(a: float | int, b: float | int) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _differences(before: dict[str, float | int], after: dict[str, float | int]) -> list[str]:
    lines = [f"{path}: {before.get(path, 'absent')} → {after.get(path, 'absent')}"
             for path in sorted(before.keys() | after.keys())
             if path not in before or path not in after or not _same(before[path], after[path])]
    return lines


def _csv_cells(text: str) -> dict[str, str]:
    """Every cell of a CSV by (row's key columns, column): rows are matched by their non-numeric cells, so a
    reordering of rows is not a change but a changed, added or missing number is."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    cells: dict[str, str] = {}
    for line, row in enumerate(body, start=2):
        key = "|".join(cell for cell in row if not _is_number(cell))
        for column, cell in zip(header, row, strict=True):
            name = f"{key} · {column}"
            if name in cells:  # rows with the same labels: keep them apart by position
                name = f"{name} · line {line}"
            cells[name] = cell
    return cells


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _manage(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def _exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo_golden")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{out / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "config.settings.dev"}
    env.pop("PYTEST_XDIST_WORKER", None)
    _manage("migrate", "--verbosity", "0", env=env)
    _manage("load_demo", env=env)
    for fmt in ("json", "csv"):
        _manage("report", DEMO_CYCLE, "--version", "1", "--format", fmt, "--out", str(out / f"cycle.{fmt}"), env=env)
        _manage("calibrated_leaderboard", CALIBRATED_RUN, "--version", "1", "--format", fmt,
                "--out", str(out / f"calibrated.{fmt}"), env=env)
    return out


@pytest.mark.parametrize("name", ["cycle", "calibrated"])
def test_demo_json_numbers_unchanged(_exports: Path, name: str) -> None:
    before = _numbers(json.loads(gzip.decompress((GOLDEN / f"{name}.json.gz").read_bytes())))
    after = _numbers(json.loads((_exports / f"{name}.json").read_bytes()))
    assert len(before) > 1000 if name == "cycle" else len(before) > 100  # the recording is a real report
    moved = _differences(before, after)
    assert not moved, f"{len(moved)} numbers of the demo {name} JSON moved:\n" + "\n".join(moved[:40])


@pytest.mark.parametrize("name", ["cycle", "calibrated"])
def test_demo_csv_cells_unchanged(_exports: Path, name: str) -> None:
    before = _csv_cells((GOLDEN / f"{name}.csv").read_text(encoding="utf-8"))
    after = _csv_cells((_exports / f"{name}.csv").read_text(encoding="utf-8"))
    moved = [f"{cell}: {before.get(cell, 'absent')!r} → {after.get(cell, 'absent')!r}"
             for cell in sorted(before.keys() | after.keys()) if before.get(cell) != after.get(cell)]
    assert not moved, f"{len(moved)} cells of the demo {name} CSV moved:\n" + "\n".join(moved[:40])


def test_the_comparison_sees_a_moved_number() -> None:
    """The comparison itself: one changed figure deep in a tree, or one changed CSV cell, is reported."""
    tree = {"groups": [{"metrics": {"alpha": {"value": 0.771822, "n": 320}}}], "meta": {"requested_at": "x"}}
    moved = json.loads(json.dumps(tree))
    moved["groups"][0]["metrics"]["alpha"]["value"] = 0.771823
    assert _differences(_numbers(tree), _numbers(moved)) == ["groups[0].metrics.alpha.value: 0.771822 → 0.771823"]
    assert _differences(_numbers(tree), _numbers(tree)) == []
    text = "group_kind,metric,value\noverall,alpha,0.771822\n"
    assert _csv_cells(text) != _csv_cells(text.replace("0.771822", "0.771823"))


def test_demo_calibrated_intervals_stay_on_the_scale_and_never_collapse_on_few_labels(_exports: Path) -> None:
    """Issue 31 on the built demo: 0 intervals outside the scale, 0 zero-width intervals from fewer than 5 labels,
    verdicts with words on every model and adjacent pair."""
    from tests.calibration.calibrated.test_anytime_board import interval_problems, walk_intervals

    report = json.loads((_exports / "calibrated.json").read_bytes())
    assert len(list(walk_intervals(report))) > 100  # every calibrated figure of the demo is walked
    assert interval_problems(report) == []
    assert all(entry["evidence"]["verdict"]["words"] for entry in report["models"])
    assert all(pair["verdict"]["words"] for pair in report["pairs"] if pair["adjacent"])

def test_artefact_check_every_demo_snapshot_passes(_exports: Path) -> None:
    """`manage.py check_artefact --all` on the demo's database: every computed version is clean (exit 0)."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{_exports / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "config.settings.dev"}
    env.pop("PYTEST_XDIST_WORKER", None)
    out = _manage("check_artefact", "--all", env=env)
    assert "cycle report v1): clean" in out and "problem" not in out


def test_language_cell_demo_cycle_report_and_translations(_exports: Path) -> None:
    """Issue 35's demo, loaded after the rest (so the numbers above stay): a Spanish and a Korean panel, translated
    cases with verified provenance, and the language cycle's report with α per language."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{_exports / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "config.settings.dev"}
    env.pop("PYTEST_XDIST_WORKER", None)
    _manage("report", "Demo language cycle", "--version", "1", "--format", "json", "--out",
            str(_exports / "languages.json"), env=env)
    cells = {c["language"]: c for c in json.loads((_exports / "languages.json").read_bytes())["languages"]}
    assert set(cells) == {"en", "es", "ko"}
    assert all(cells[tag]["alpha"] is not None and cells[tag]["n_items"] == 6 for tag in ("es", "ko"))
    out = _manage("shell", "-c", (
        "from annotations.models import Panel; from evaluations.models import TestCase as T; "
        "print(sorted((p.language, p.tradition.key) for p in Panel.objects.exclude(language=''))); "
        "print(T.objects.filter(source_case__isnull=False).count(), "
        "T.objects.filter(source_case__isnull=False, verified_by='').count())"), env=env)
    assert "[('es', 'catholic'), ('ko', 'reformed')]" in out and "6 0" in out
