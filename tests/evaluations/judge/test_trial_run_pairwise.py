"""Issue 32's trial-run rule on the pairwise tables (position bias, §6.2.1): a group with fewer pairs judged in both
orders than the minimum shows its counts but no reversal rate, interval or verdict; a pairwise run with fewer pairs
over all is a trial — listed on its own page, never the validation status's position check."""
from __future__ import annotations

import pytest
from django.urls import reverse

from calibration.validation.position import (
    ALL,
    TOO_FEW_PAIRS,
    position_analysis,
    position_check,
    position_group,
)
from calibration.validation.status import validation_status
from evaluations.judge.pairwise import pairwise_run_create, pairwise_run_execute

from .conftest import import_benchmark, no_sleep

FAST = {"client_options": {"sleep": no_sleep}}


def test_trial_run_pairwise_group_below_the_minimum_withholds_its_rate_and_verdict() -> None:
    always_first = [("A", "A")] * 4  # a judge that always picks the answer shown first: 4 reversals of 4
    thin = position_group(always_first, minimum=10)
    assert thin["n_pairs"] == 4 and thin["reversals"] == 4  # the counts are facts, kept
    assert thin["reversal_rate"] is None and thin["reversal_ci"] is None and thin["first_position_share"] is None
    assert thin["verdict"] == TOO_FEW_PAIRS and thin["flagged"] is False
    enough = position_group(always_first * 3, minimum=10)
    assert enough["reversal_rate"] == 1.0 and enough["verdict"] == "fail" and enough["flagged"] is True


@pytest.fixture
def benchmark(db, tmp_path, rubric_v1):  # type: ignore[no-untyped-def]
    import_benchmark(tmp_path, n_cases=24)  # 3 models: 72 pairs
    return rubric_v1


def test_trial_run_pairwise_is_listed_but_never_the_validation_check(benchmark, judge_settings, fake_server,  # type: ignore[no-untyped-def]
                                                                     client) -> None:
    from tests.annotations.factories import person

    fake_server.position_bias = 1.0  # every call answered "A": every pair reverses
    trial = pairwise_run_execute(run=pairwise_run_create(model="lazy", base_url=fake_server.base_url, limit=3), **FAST)
    payload = position_analysis(run=trial)
    assert payload["trial"] is True and payload["n"] == 3 and payload["flagged"] is False
    assert payload["groups"][ALL]["verdict"] == TOO_FEW_PAIRS and payload["groups"][ALL]["reversal_rate"] is None
    check = position_check(run=trial)
    row = next(c for c in validation_status().checks if c.key == "position")
    assert row.state == "trial only" and f"check #{check.pk}" in row.detail  # listed, with no verdict

    fake_server.position_bias = 0.0
    full = pairwise_run_execute(run=pairwise_run_create(model="fair", base_url=fake_server.base_url), **FAST)
    full_check = position_check(run=full)
    newer_trial = position_check(run=trial)  # a newer check of the trial run: still not the one reported
    assert newer_trial.pk > full_check.pk
    row = next(c for c in validation_status().checks if c.key == "position")
    assert row.state == "passed" and f"check #{full_check.pk}" in row.detail

    client.force_login(person("admin"))
    page = client.get(reverse("calibration:pairwise_run", args=[trial.pk])).content.decode()
    assert 'data-testid="pairwise-trial"' in page and "too few pairs for a reversal rate (n = 3" in page
    page = client.get(reverse("calibration:pairwise_run", args=[full.pk])).content.decode()
    assert 'data-testid="pairwise-check"' in page and 'data-testid="pairwise-trial"' not in page
