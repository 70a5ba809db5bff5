"""Running the validation programme's checks from pages: each kind's input rules, the queued check computed by the
worker (the immediate backend here), and pairwise runs started, explained and retried from their page."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.timezone import localtime

from calibration.validation.checks import validation_check_validate
from calibration.validation.store import CheckKind, bias_checks
from evaluations.judge.fake_server import FakeLLMServer, FaultRule
from evaluations.judge.pairwise import pairwise_run_retry
from evaluations.judge.status import pairwise_run_outcome
from evaluations.models import JudgeRun, PairwiseRun
from tests.calibration.reports.test_report_views import scored_world
from tests.evaluations.judge.conftest import import_benchmark


@pytest.fixture
def scored(db, immediate_tasks):  # type: ignore[no-untyped-def]
    return scored_world()


def test_each_check_kind_names_what_it_needs(scored) -> None:  # type: ignore[no-untyped-def]
    world, run = scored
    run.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        validation_check_validate(kind=CheckKind.VERBOSITY, runs=[], cycle=None)
    assert "run" in refused.value.error_dict
    with pytest.raises(ValidationError) as refused:
        validation_check_validate(kind=CheckKind.JUDGES, runs=[run], cycle=None)
    assert "two or more" in str(refused.value)
    with pytest.raises(ValidationError, match="cross-tradition"):
        validation_check_validate(kind=CheckKind.TRADITION, runs=[], cycle=world.cycle)
    queued = JudgeRun.objects.create(rubric=run.rubric, primary_model="x", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValidationError, match="finished runs"):
        validation_check_validate(kind=CheckKind.VERBOSITY, runs=[queued], cycle=None)
    with pytest.raises(ValidationError, match="not a check"):
        validation_check_validate(kind=CheckKind.POSITION, runs=[run], cycle=None)
    request = validation_check_validate(kind=CheckKind.VERBOSITY, runs=[run], cycle=world.cycle)
    assert request.run_ids == (run.pk,) and request.cycle_id == world.cycle.pk


def test_a_not_run_check_is_queued_from_the_validation_page(scored, client, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    world, run = scored
    client.force_login(world.admin)
    page = client.get(reverse("calibration:validation")).content.decode()
    assert 'action="/calibration/validation/checks/verbosity/run/"' in page and "Run this check" in page
    assert f'<option value="{run.pk}">#{run.pk}' in page  # finished runs offered by id, date, judge …
    url = reverse("calibration:validation_check_run", args=["verbosity"])
    refused = client.post(url, {})
    assert refused.status_code == 422 and "choose one finished judge run" in refused.content.decode()
    assert not bias_checks().exists()
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(url, {"verbosity-run": run.pk, "verbosity-cycle": world.cycle.pk})
    assert done.status_code == 302
    check = bias_checks().get()
    assert (check.check_kind, check.judge_run_id, check.cycle_id, check.requested_by) == (
        "verbosity", run.pk, world.cycle.pk, world.admin)
    assert client.post(reverse("calibration:validation_check_run", args=["position"])).status_code == 404


@pytest.fixture
def pairs(db, tmp_path, rubric_v1, settings):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=2, models=[("a/one", "A", "one"), ("b/two", "B", "two")])  # 2 pairs
    with FakeLLMServer() as server:
        settings.FAITHBENCH = {**settings.FAITHBENCH, "LLM_BASE_URL": server.base_url, "LLM_API_KEY": "k",
                               "RETRY_INITIAL_BACKOFF": 0.01}
        yield server


def test_pairwise_run_from_its_page_fails_with_a_reason_then_retries(pairs, client, immediate_tasks,
                                                                        django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    from tests.annotations.factories import person

    client.force_login(person("admin", name="Pairwise Admin"))
    pairs.rules.append(FaultRule("404"))
    confirm = client.post(reverse("calibration:pairwise_start"), {"model": "judge/p"})
    assert confirm.status_code == 200 and "2 pairs" in confirm.content.decode() and "4 calls" in confirm.content.decode()
    assert not PairwiseRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("calibration:pairwise_start"), {"model": "judge/p", "start": "1"})
    run = PairwiseRun.objects.get()
    assert started["Location"] == reverse("calibration:pairwise_run", args=[run.pk])
    outcome = pairwise_run_outcome(run=run)
    assert outcome.state == "failed" and "does not know the judge model judge/p" in outcome.reason
    page = client.get(started["Location"]).content.decode()
    assert "Failed — 0 of 4 calls with a verdict, 4 failed" in page and "Retry 4 failed calls" in page
    assert not bias_checks().exists()  # nothing to check

    pairs.rules.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("calibration:pairwise_retry", args=[run.pk]))
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == ("finished", 4, 0)
    check = bias_checks().get(summary__check="position")
    assert check.pairwise_run == run
    page = client.get(started["Location"]).content.decode()
    assert f"Position check #{check.pk}" in page and "Finished — 4 of 4 calls with a verdict" in page
    with pytest.raises(ValidationError, match="every pair has a verdict"):
        pairwise_run_retry(run=run)


def test_the_report_form_offers_finished_runs_by_date_judge_and_models(scored, client) -> None:  # type: ignore[no-untyped-def]
    world, run = scored
    run.refresh_from_db()
    unfinished = JudgeRun.objects.create(rubric=run.rubric, primary_model="x/y", base_url="http://127.0.0.1:9/v1")
    client.force_login(world.admin)
    page = client.get(reverse("calibration:report", args=[world.cycle.pk])).content.decode()
    label = (f"#{run.pk} · {localtime(run.created_at):%Y-%m-%d %H:%M} · judge google/gemini-3-flash-preview · every model · "
             f"rubric v{run.rubric.version} · {run.scored_items} scored")
    assert f'<option value="{run.pk}">{label}</option>' in page
    assert f'<option value="{unfinished.pk}"' not in page  # only finished runs that scored something
    assert "Judge run id" not in page
    refused = client.post(reverse("calibration:report_compute", args=[world.cycle.pk]),
                          {"seed": 1, "n_resamples": 0, "run": unfinished.pk})
    assert refused.status_code == 422 and "Select a valid choice" in refused.content.decode()
