"""Configuration: settings first, then FAITHBENCH_* environment variables, then the methodology's values."""
from __future__ import annotations

import pytest

from evaluations.judge.config import (
    PipelineConfig,
    RetryPolicy,
    judge_family,
    judge_payload,
    setting,
    test_model_payload,
)


@pytest.mark.parametrize("name, family", [
    ("google/gemini-3-flash-preview", "gemini"), ("google/gemini-2.5-pro", "gemini"), ("openai/gpt-4o-mini", "gpt"),
    ("openai/gpt-5", "gpt"), ("anthropic/claude-sonnet-4.5", "claude"), ("meta-llama/llama-3.3-70b-instruct", "llama"),
    ("Google/Gemini-2.0-Flash", "gemini"), ("mistralai/mistral-large", ""), ("openai/o3", ""), ("", ""),
])
def test_judge_family_from_the_model_name(name, family):
    assert judge_family(name) == family


def test_family_mapping_can_be_overridden_in_settings(settings):
    settings.FAITHBENCH = {**settings.FAITHBENCH, "MODEL_FAMILIES": [["openai/o*", "gpt"], ["mistralai/*", "mistral"]]}
    assert judge_family("openai/o3") == "gpt" and judge_family("mistralai/mistral-large") == "mistral"
    assert judge_family("google/gemini-2.5-pro") == ""


def test_settings_win_over_the_environment_which_wins_over_defaults(settings, monkeypatch):
    settings.FAITHBENCH = {"LLM_BASE_URL": "https://llm.example/v1", "LLM_API_KEY": ""}
    monkeypatch.setenv("FAITHBENCH_MAX_IN_FLIGHT", "7")
    monkeypatch.setenv("FAITHBENCH_LLM_BASE_URL", "https://ignored.example/v1")
    monkeypatch.setenv("FAITHBENCH_JUDGE_SECONDARY_MODEL", "openai/gpt-5")
    config = PipelineConfig.from_settings()
    assert config.base_url == "https://llm.example/v1" and config.max_in_flight == 7
    assert config.secondary_model == "openai/gpt-5"
    assert config.primary_model == "google/gemini-3-flash-preview" and config.fallback_model == "openai/gpt-4o-mini"
    assert config.retry == RetryPolicy(attempts=3, initial=1.0, multiplier=2.0, cap=60.0)
    assert setting("LLM_API_KEY") == "" and "api_key" not in repr(config)


def test_secondary_judge_defaults_to_the_fallback_judge(settings):
    settings.FAITHBENCH = {"JUDGE_FALLBACK_MODEL": "openai/gpt-4o-mini"}
    assert PipelineConfig.from_settings().secondary_model == "openai/gpt-4o-mini"


def test_judge_and_test_model_request_bodies_follow_the_methodology():
    config = PipelineConfig(base_url="x")
    judge = judge_payload(model="m", system_prompt="S", user_message="U", config=config)
    assert judge == {"model": "m", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
                     "temperature": 0, "max_tokens": 16000, "response_format": {"type": "json_object"}}
    test = test_model_payload(model="t", question="Q?")
    assert (test["temperature"], test["max_tokens"], "response_format" in test) == (0.7, 2000, False)
    assert test["messages"] == [{"role": "system", "content": "Answer the question."}, {"role": "user", "content": "Q?"}]


def test_family_mapping_from_the_environment_is_json(settings, monkeypatch):
    settings.FAITHBENCH = {}
    monkeypatch.setenv("FAITHBENCH_MODEL_FAMILIES", '[["x-ai/grok-*", "grok"]]')
    assert judge_family("x-ai/grok-4") == "grok" and judge_family("openai/gpt-4o") == ""
