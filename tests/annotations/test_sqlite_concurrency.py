"""Double submits and autosave-vs-submit races on the default database (a SQLite file, the project's settings):
409 or 200, never a server error, and the submission is what stays (tests/annotations/sqlite_race.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 4


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite pass runs it; PostgreSQL has its own race tests")
def test_races_on_a_sqlite_file_answer_200_or_409_and_keep_the_submission(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run(
        [sys.executable, "-m", "tests.annotations.sqlite_race", str(tmp_path / "race.sqlite3"), str(ROUNDS)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(out["double_submit"]) == ROUNDS and len(out["autosave_vs_submit"]) == ROUNDS
    for statuses in out["double_submit"]:
        assert sorted(statuses) == [200, 409, 409], statuses  # one submission taken, the others told why
    for statuses in out["autosave_vs_submit"]:
        assert set(statuses) <= {200, 409} and statuses[1] == 200, statuses  # the submit always lands
    for final in out["final"]:
        assert final == {"status": "submitted", "annotations": 1, "submitted_events": 1, "scores": [2]}, final
