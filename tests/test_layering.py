"""Dependencies point one way and nothing imports in a circle (the contracts in pyproject.toml).

`lint-imports` (import-linter) checks six contracts: the apps' layers (config → calibration → delphi →
annotations → accounts → evaluations → stats), `stats` free of Django, the layers inside `evaluations`, inside
`calibration` and inside `delphi`, and no cycle between sibling modules of any package. Imports inside functions
count. The control tests plant a violation in a copy of the project and check that the contract breaks.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "calibration", "delphi", "casereview", "evidence", "annotations", "accounts", "evaluations", "audit", "access", "stats")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
        env={"PATH": str(LINT_IMPORTS.parent), "PYTHONPATH": str(root)},
    )


def test_import_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "8 kept, 0 broken" in result.stdout


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "templates"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _planted() -> None:\n    {line}\n", encoding="utf-8")


@pytest.mark.parametrize(("module", "line", "contract"), [
    # an app importing from the app above it
    ("evaluations/selectors.py", "from annotations.models import Assignment  # noqa", "Apps depend downwards"),
    ("annotations/services.py", "import calibration.cycles.sampling  # noqa", "Apps depend downwards"),
    # stats touching Django
    ("stats/alpha.py", "import django.db  # noqa", "stats is pure numpy"),
    # the models reaching up to services inside evaluations (the circle this layering removed)
    ("evaluations/models/benchmark.py", "from evaluations.services import rubric_version_create  # noqa",
     "Inside evaluations"),
    # services calling tasks (tasks call services, never the reverse)
    ("evaluations/judge/services.py", "from evaluations.tasks import judge_run_enqueue  # noqa", "Inside evaluations"),
    # a cycle page reaching up to the reports room inside calibration (the cycles room sits below it)
    ("calibration/cycles/views.py", "from calibration.reports import snapshots  # noqa", "Inside calibration"),
    # the draw reaching up to the calibrated leaderboard, which reads the draw's truth rule
    ("calibration/cycles/services.py", "from calibration.calibrated import selectors  # noqa", "Inside calibration"),
    # calibration's rooms are independent siblings over evidence: none imports another (the kit is in evidence)
    ("calibration/calibrated/snapshots.py", "from calibration.reports import schema  # noqa", "Inside calibration"),
    ("calibration/validation/status.py", "from calibration.studies import selectors  # noqa", "Inside calibration"),
    ("calibration/reports/cells.py", "from calibration.validation import headline  # noqa", "Inside calibration"),
    # the evidence kit reaching up to the snapshot services that use it
    ("evidence/kit/trees.py", "from evidence.services import snapshot_run  # noqa", "Inside evidence"),
    # Delphi's reads reaching up to its writes
    ("delphi/selectors.py", "from delphi.services import delphi_study_create  # noqa", "Inside delphi"),
    # two sibling modules importing each other
    ("calibration/cycles/sampling.py", "from calibration.cycles import selectors  # noqa", "No circular imports"),
])
def test_planted_violation_breaks_a_contract(project_copy: Path, module: str, line: str, contract: str) -> None:
    plant(project_copy / module, line)
    result = lint_imports(project_copy)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout


def test_no_wildcard_import_anywhere_in_the_project() -> None:
    """Every name is imported by name (settings overlays included), so a reader can follow it."""
    offenders = []
    for package in (*PACKAGES, "tests", "benchmarks"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                stripped = line.strip()
                if stripped.startswith(("from ", "import ")) and stripped.split("#")[0].rstrip().endswith("import *"):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert offenders == []
