"""Generation conditions through generation (resumable, budget), the judge and the leaderboard (issue 26 item 1)."""
from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluations.judge.fake_server import REASONING_MARKER, FaultRule, route_marker
from evaluations.models import GenerationCondition, ModelResponse

from .conftest import import_benchmark


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=3)
    return rubric_v1


def generate(*args: str) -> str:
    out = StringIO()
    call_command("generate_responses", "--models", "openai/gpt-4o", "--run-label", "gen", *args, stdout=out,
                 stderr=StringIO())
    return out.getvalue()


def test_generation_condition_default_is_standard_with_four_repetitions(benchmark, fake_server):
    generate()
    made = ModelResponse.objects.filter(run_label="gen")
    assert made.count() == 3 * 4  # 3 cases × 4 repetitions (§8.4)
    assert {r.condition.is_standard for r in made} == {True}
    assert sorted(set(made.values_list("repetition", flat=True))) == [1, 2, 3, 4]
    assert len(set(made.values_list("text", flat=True))) == 12  # repetitions are different answers
    assert {str(r.temperature) for r in made} == {"0.70"} and {r.max_tokens for r in made} == {2000}


def test_generation_condition_is_sent_and_recorded(benchmark, fake_server):
    thinking = GenerationCondition.objects.create(name="reasoning-high-together", reasoning=True,
                                                  reasoning_effort="high", route="together", temperature=Decimal("1"))
    generate("--condition", thinking.name, "--repetitions", "2")
    made = ModelResponse.objects.filter(run_label="gen", condition=thinking)
    assert made.count() == 6
    for response in made:
        assert REASONING_MARKER in response.text and route_marker("together") in response.text
        assert response.settings["reasoning"] == {"effort": "high"}
        assert response.settings["provider"] == {"order": ["together"], "allow_fallbacks": False}
        assert str(response.temperature) == "1.00"
    with pytest.raises(CommandError, match="no generation condition named 'nope'"):
        generate("--condition", "nope")


def test_generation_condition_resumes_after_failures_asking_only_for_what_is_missing(benchmark, fake_server):
    fake_server.rules.append(FaultRule("400", contains="Question 1:"))  # not retried: case 1 fails every time
    out = generate("--repetitions", "2")
    assert "4 created" in out and "run the same command again" in out
    fake_server.rules.clear()
    fake_server.reset()
    generate("--repetitions", "2")
    assert len(fake_server.records()) == 2  # only case 1's two repetitions were asked again
    assert ModelResponse.objects.filter(run_label="gen").count() == 6
    assert "nothing to do" in generate("--repetitions", "2")


def test_generation_condition_stops_at_the_budget_and_goes_on_when_run_again(benchmark, fake_server, settings):
    settings.FAITHBENCH = {**settings.FAITHBENCH, "MAX_IN_FLIGHT": 1}
    out = generate("--repetitions", "4", "--budget", "0.00000001")  # the first answer spends it
    assert "stopped at the budget" in out
    first = ModelResponse.objects.filter(run_label="gen").count()
    assert 1 <= first < 12
    generate("--repetitions", "4")
    assert ModelResponse.objects.filter(run_label="gen").count() == 12
