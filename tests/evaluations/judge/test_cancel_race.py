"""Cancel is safe against a committing worker, on SQLite (a file database, in a subprocess) and PostgreSQL: every
cancel answers, every run ends cancelled (or finished, when the cancel came after its last batch), nothing twice."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[3]
ROUNDS = 8


def check(outcomes: list[dict]) -> None:
    assert len(outcomes) == ROUNDS
    assert sum(o["final"] == "cancelled" and o["processed"] < o["total"] for o in outcomes) >= ROUNDS // 2, outcomes
    for outcome in outcomes:
        assert outcome["errors"] == [], outcome
        assert outcome["cancel"] in ("cancelling", "cancelled"), outcome  # answered, not "database is locked"
        # cancelled; or finished when the cancel came as its last batch was being written (nothing left to stop)
        assert outcome["final"] == "cancelled" or (
            outcome["final"] == "finished" and outcome["processed"] == outcome["total"]), outcome
        assert outcome["results"] == outcome["distinct"], outcome  # no (response, role) stored twice
        assert outcome["processed"] <= outcome["total"], outcome


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite pass runs it; PostgreSQL runs the other test")
def test_cancelling_while_the_worker_commits_on_a_sqlite_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run(
        [sys.executable, "-m", "tests.evaluations.judge.cancel_race", str(tmp_path / "race.sqlite3"), str(ROUNDS)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    check(json.loads(result.stdout.strip().splitlines()[-1])["rounds"])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: runs in the DATABASE_URL pass")
# Transactional (the worker thread has its own connection); the flush afterwards puts the migration's reference
# data back for the tests that follow (tests/conftest.py).
@pytest.mark.django_db(transaction=True)
def test_cancelling_while_the_worker_commits_on_postgresql(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.evaluations.judge.cancel_race import cancel_race

    check(cancel_race(ROUNDS, tmp_path)["rounds"])
