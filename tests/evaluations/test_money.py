"""Costs carry their currency (FAITHBENCH_CURRENCY, default USD) on the run page and in the run's summary."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from evaluations.judge.config import money
from evaluations.models import JudgeRun
from evaluations.selectors import rubric_active
from tests.annotations.factories import person

pytestmark = pytest.mark.django_db


def test_money_names_the_currency(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("FAITHBENCH_CURRENCY", raising=False)
    assert money(Decimal("0.00123456")) == "0.001235 USD"
    assert money(None) == "—"
    settings.FAITHBENCH = {**settings.FAITHBENCH, "CURRENCY": "EUR"}
    assert money(Decimal("2")) == "2.000000 EUR"
    settings.FAITHBENCH = {k: v for k, v in settings.FAITHBENCH.items() if k != "CURRENCY"}
    monkeypatch.setenv("FAITHBENCH_CURRENCY", "CHF")
    assert money(1, places=2) == "1.00 CHF"


def test_the_run_page_and_summary_show_the_currency(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("FAITHBENCH_CURRENCY", raising=False)
    run = JudgeRun.objects.create(rubric=rubric_active(), primary_model="j", base_url="http://127.0.0.1:9/v1",
                                  cost=Decimal("0.0421"))
    client.force_login(person("admin"))
    html = client.get(reverse("judge:run_detail", kwargs={"pk": run.pk})).content.decode()
    assert 'data-testid="run-cost">0.042100 USD<' in html
    from evaluations.judge.selectors import judge_run_summary

    assert "cost 0.042100 USD" in "\n".join(judge_run_summary(run=run).lines())
