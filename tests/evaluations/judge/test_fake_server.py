"""The fake OpenAI-compatible endpoint itself: deterministic answers, faults by rate and by rule, call counts."""
from __future__ import annotations

import json

import httpx
import pytest

from evaluations.judge.fake_server import FakeLLMServer, FaultRule, fake_score, text_key
from evaluations.judge.parsing import parse_judge_scores
from evaluations.judge.prompts import PromptSubDimension, judge_system_prompt, judge_user_message

SUBS = [PromptSubDimension("logicalValidity", 35, "a"), PromptSubDimension("evidenceUsage", 30, "b"),
        PromptSubDimension("objectionHandling", 25, "c"), PromptSubDimension("persuasiveClarity", 10, "d")]
SYSTEM = judge_system_prompt(section="apologetics", sub_dimensions=SUBS)


def judge_request(text: str, model: str = "judge/a") -> dict:
    user = judge_user_message(question="Q?", response=text, reference_answer="ref", tradition="Reformed")
    return {"model": model, "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            "temperature": 0, "max_tokens": 16000, "response_format": {"type": "json_object"}}


HTTP = httpx.Client(timeout=5, verify=False)  # one client: building one per request costs ~20 ms


def post(server: FakeLLMServer, body: dict, path: str = "/v1/chat/completions") -> httpx.Response:
    return HTTP.post(f"http://{server.host}:{server.port}{path}", json=body)


def test_judge_requests_get_deterministic_scores_for_the_system_prompts_sub_dimensions():
    with FakeLLMServer() as server:
        first = post(server, judge_request("An answer."))
        second = post(server, judge_request("An answer."), path="/chat/completions")
    assert first.status_code == second.status_code == 200
    content = first.json()["choices"][0]["message"]["content"]
    assert content == second.json()["choices"][0]["message"]["content"]
    scores = parse_judge_scores(content, expected=[s.key for s in SUBS])
    assert [s.raw_score for s in scores] == [fake_score(text_key("An answer."), s.key, "judge/a") for s in SUBS]
    assert first.json()["usage"]["cost"] > 0
    assert server.calls_for("An answer.") == 2


def test_test_model_requests_get_a_plausible_answer():
    body = {"model": "openai/gpt-4o", "messages": [{"role": "system", "content": "Answer the question."},
                                                   {"role": "user", "content": "Who wrote Romans?"}],
            "temperature": 0.7, "max_tokens": 2000}
    with FakeLLMServer() as server:
        answer = post(server, body).json()["choices"][0]["message"]["content"]
        assert answer == post(server, body).json()["choices"][0]["message"]["content"]
        assert server.records()[0].kind == "test" and server.calls_for("Who wrote Romans?") == 2
    assert "openai/gpt-4o" in answer and len(answer.split()) > 40


@pytest.mark.parametrize("fault, status", [("401", 401), ("403", 403), ("400", 400), ("404", 404), ("500", 500),
                                           ("503", 503), ("408", 408)])
def test_http_faults_on_demand(fault, status):
    with FakeLLMServer(rules=[FaultRule(fault, contains="bad", times=1)]) as server:
        assert post(server, judge_request("a bad one")).status_code == status
        assert post(server, judge_request("a bad one")).status_code == 200  # times=1
        assert post(server, judge_request("a good one")).status_code == 200


def test_429_carries_retry_after():
    with FakeLLMServer(rules=[FaultRule("429")], retry_after="3") as server:
        response = post(server, judge_request("x"))
    assert response.status_code == 429 and response.headers["retry-after"] == "3"


def test_content_faults_break_the_json_in_the_announced_ways():
    keys = [s.key for s in SUBS]
    with FakeLLMServer() as server:
        for fault in ("malformed", "partial", "missing", "float_score"):
            server.rules[:] = [FaultRule(fault)]
            content = post(server, judge_request(fault)).json()["choices"][0]["message"]["content"]
            with pytest.raises(ValueError):
                parse_judge_scores(content, expected=keys)
        server.rules[:] = [FaultRule("bad_envelope")]
        with pytest.raises(json.JSONDecodeError):
            post(server, judge_request("envelope")).json()


def test_timeout_fault_holds_the_connection_past_the_client_timeout():
    with FakeLLMServer(rules=[FaultRule("timeout")], hang_seconds=1.0) as server:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{server.base_url}/chat/completions", json=judge_request("slow"), timeout=0.2)


def test_fault_rates_are_seeded_and_independent_of_request_order():
    texts = [f"text {i}" for i in range(200)]

    def outcomes(order: list[str]) -> dict[str, str]:
        with FakeLLMServer(fault_rates={"503": 0.2, "malformed": 0.1}, seed=5) as server:
            for text in order:
                post(server, judge_request(text))
            return {r.key: r.outcome for r in server.records()}

    forward = outcomes(texts)
    assert forward == outcomes(list(reversed(texts)))
    counts = list(forward.values())
    assert 20 <= counts.count("503") <= 60 and 5 <= counts.count("malformed") <= 35


def test_unknown_routes_and_bad_bodies():
    with FakeLLMServer(api_key="secret") as server:
        assert httpx.get(f"{server.base_url}/health").status_code == 200
        assert httpx.get(f"{server.base_url}/models").status_code == 404
        assert post(server, judge_request("x")).status_code == 401  # no key
        ok = httpx.post(f"{server.base_url}/chat/completions", json=judge_request("x"),
                        headers={"Authorization": "Bearer secret"})
        assert ok.status_code == 200
        assert httpx.post(f"{server.base_url}/chat/completions", content=b"nope",
                          headers={"Authorization": "Bearer secret"}).status_code == 400


def test_unknown_fault_names_are_rejected():
    with pytest.raises(ValueError, match="unknown fault"):
        FakeLLMServer(fault_rates={"418": 0.1})
