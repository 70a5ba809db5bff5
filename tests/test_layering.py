"""Dependencies point one way: evaluations ← annotations ← calibration; stats imports no Django (STYLE.md)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "evaluations": ("annotations", "calibration"),
    "annotations": ("calibration",),
    "stats": ("django", "accounts", "evaluations", "annotations", "calibration"),
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_upwards(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue  # migrations name other apps' models as strings by design
        for name in imported_modules(path):
            if name.split(".")[0] in FORBIDDEN[package]:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []
