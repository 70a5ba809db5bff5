"""Demo benchmark data: the files in fixtures/demo/, loaded through the real importers."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from .importing import ImportReport, import_file
from .services import reference_data_ensure

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"


def demo_benchmark_load(*, directory: Path = DEMO_DIR) -> list[ImportReport]:
    """Traditions, rubric v1.0, test cases, models with responses, and TheoBERT cases (idempotent)."""
    reference_data_ensure()
    reports = []
    for kind, pattern in (("cases", "cases-*.json"), ("responses", "responses-*.jsonl"), ("theobert", "theobert-*.json")):
        for path in sorted(directory.glob(pattern)):
            reports.append(import_file(path=path, kind=kind, name=str(path.relative_to(directory.parent.parent))))
    return reports
