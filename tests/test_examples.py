"""examples/push_and_judge.py, run as a user would (a subprocess, over HTTP) against the live test server and
the fake judge endpoint: it pushes cases and responses, judges them, computes a report version and downloads
its bundle."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from accounts.models import ApiToken
from evaluations.judge.fake_server import FakeLLMServer
from evaluations.models import JudgeRun, ModelResponse
from tests.accounts.api import token_secret
from tests.annotations.factories import person, world_build

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.django_db(transaction=True)


def test_the_example_script_pushes_judges_and_downloads_the_bundle(live_server, settings, immediate_tasks,
                                                                   tmp_path) -> None:  # type: ignore[no-untyped-def]
    world = world_build()
    admin = person("admin", name="Script Admin")
    token = token_secret(admin, ApiToken.Scope.DATA_WRITE, ApiToken.Scope.JUDGE_RUN, ApiToken.Scope.REPORTS_READ)
    cases = [{"external_id": f"EX-{i}", "dimension": "doctrinal", "difficulty": "easy", "tradition": "catholic",
              "question_type": "factual_recall", "prompt": f"Example question {i}?"} for i in range(3)]
    responses = [{"case": c["external_id"], "model": "acme/example-1", "provider": "Acme", "family": "acme",
                  "text": f"An answer to {c['external_id']}."} for c in cases]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "responses.jsonl").write_text("\n".join(json.dumps(r) for r in responses) + "\n")
    out = tmp_path / "bundle.zip"
    with FakeLLMServer() as fake:
        settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_BASE_URL": fake.base_url, "LLM_API_KEY": "test-key",
                               "REQUEST_TIMEOUT": 10.0, "WRITE_FLUSH_SECONDS": 0.05}
        result = subprocess.run(
            [sys.executable, "examples/push_and_judge.py", "--base-url", live_server.url, "--cases",
             str(tmp_path / "cases.json"), "--responses", str(tmp_path / "responses.jsonl"), "--label", "example",
             "--cycle", str(world.cycle.pk), "--resamples", "50", "--out", str(out), "--poll", "0.2",
             "--timeout", "120"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={"PATH": "/usr/bin:/bin", "FAITHBENCH_TOKEN": token})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "responses: 3 created, 0 updated, 0 unchanged" in result.stdout
    assert ModelResponse.objects.filter(model__name="acme/example-1").count() == 3
    run = JudgeRun.objects.get(label="example")
    assert run.status == "finished" and run.processed_items == run.total_items > 0
    assert f"judge run {run.pk}: finished" in result.stdout
    with zipfile.ZipFile(out) as bundle:
        names = set(bundle.namelist())
    assert {"README.txt", "report.json", "report.pdf", "ratings.csv", "SHA256SUMS"} <= {n.split("/")[-1] for n in names}


def test_the_example_script_reports_the_servers_reasons(live_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    admin = person("admin", name="Script Admin")
    token = token_secret(admin, ApiToken.Scope.DATA_WRITE, ApiToken.Scope.JUDGE_RUN, ApiToken.Scope.REPORTS_READ)
    (tmp_path / "responses.json").write_text(json.dumps([{"case": "NO-SUCH", "model": "m", "text": "x"}]))
    result = subprocess.run(
        [sys.executable, "examples/push_and_judge.py", "--base-url", live_server.url, "--responses",
         str(tmp_path / "responses.json")], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "FAITHBENCH_TOKEN": token})
    assert result.returncode == 1
    assert "pushing responses: HTTP 400" in result.stderr and "'field': 'case'" in result.stderr
