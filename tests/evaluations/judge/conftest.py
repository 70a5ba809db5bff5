"""Fixtures for the judge pipeline: benchmark data through the real importer, and the fake endpoint."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluations.importing import import_file
from evaluations.judge.fake_server import FakeLLMServer

DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]
TRADITIONS = [None, "catholic", "orthodox", "reformed", "evangelical", "pentecostal"]
QUESTION_TYPES = ["factual_recall", "comparative_analysis", "applied_reasoning", "contested_topic"]
MODELS = [
    ("openai/gpt-4o", "OpenAI", "gpt"),
    ("anthropic/claude-sonnet-4.5", "Anthropic", "claude"),
    ("google/gemini-2.5-pro", "Google", "gemini"),
]


def write_json(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


def benchmark_files(
    directory: Path, *, n_cases: int, models: list[tuple[str, str, str]] | None = None, run_label: str = "r1",
    prefix: str = "C",
) -> tuple[Path, Path]:
    """Write n_cases cases (cycling facets) and one response per case and model as import files."""
    models = models or MODELS
    cases = [
        {
            "external_id": f"{prefix}-{i:04d}", "dimension": DIMENSIONS[i % 6], "difficulty": DIFFICULTIES[i % 4],
            "tradition": TRADITIONS[i % 6], "question_type": QUESTION_TYPES[i % 4], "visibility": "public",
            "is_active": True, "prompt": f"Question {i}: explain the term hesed in Psalm {i % 150 + 1}.",
            "reference_answer": f"Reference answer {i}." if i % 2 else "", "version": 1,
        }
        for i in range(n_cases)
    ]
    responses = [
        {
            "case": case["external_id"], "model": name, "provider": provider, "family": family,
            "run_label": run_label, "text": f"{name} answers {case['external_id']}: covenant loyalty, hesed.",
            "temperature": 0.7, "max_tokens": 2000, "system_prompt": "Answer the question.", "settings": {},
            "prompt_tokens": 50, "completion_tokens": 120,
        }
        for case in cases
        for name, provider, family in models
    ]
    return (write_json(directory / f"{prefix}-cases.json", cases),
            write_json(directory / f"{prefix}-responses.json", responses))


def import_benchmark(directory: Path, **options: Any) -> None:
    """benchmark_files, imported through the real import service."""
    cases, responses = benchmark_files(directory, **options)
    import_file(path=cases, kind="cases", progress=False)
    import_file(path=responses, kind="responses", progress=False)


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(hang_seconds=2.0) as server:
        yield server


@pytest.fixture
def judge_settings(settings, fake_server):  # type: ignore[no-untyped-def]
    """Point the pipeline at the fake server, with the methodology's judges and a fast writer."""
    settings.FAITHBENCH = {
        **settings.FAITHBENCH,
        "LLM_BASE_URL": fake_server.base_url,
        "LLM_API_KEY": "test-key",
        "JUDGE_PRIMARY_MODEL": "google/gemini-3-flash-preview",
        "JUDGE_FALLBACK_MODEL": "openai/gpt-4o-mini",
        "JUDGE_SECONDARY_MODEL": "openai/gpt-4o-mini",
        "REQUEST_TIMEOUT": 5.0,  # generous: a loaded CI machine must not turn slow answers into timeouts
        "WRITE_FLUSH_SECONDS": 0.05,
    }
    return settings


async def no_sleep(seconds: float) -> None:
    """Backoff through the injected sleep: record nothing, wait for nothing."""
    return None
