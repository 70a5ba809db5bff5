"""`load_demo` creates a superuser with a published password: it refuses to run with DEBUG off unless told."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from accounts.models import User
from evaluations.models import TestCase

pytestmark = pytest.mark.django_db


class Reached(Exception):
    """Raised by the first loading step: the guard let the command through."""


@pytest.fixture
def first_step_reached(monkeypatch):  # type: ignore[no-untyped-def]
    def first_step() -> None:
        raise Reached

    monkeypatch.setattr("calibration.management.commands.load_demo.demo_benchmark_load", first_step)


@override_settings(DEBUG=False)
def test_load_demo_refuses_with_debug_off_and_loads_nothing() -> None:
    with pytest.raises(CommandError, match="--i-know-this-is-not-production"):
        call_command("load_demo")
    assert not User.objects.exists() and not TestCase.objects.exists()


@override_settings(DEBUG=False)
def test_load_demo_runs_with_debug_off_when_the_operator_insists(first_step_reached) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Reached):
        call_command("load_demo", "--i-know-this-is-not-production")


@override_settings(DEBUG=True)
def test_load_demo_runs_in_development(first_step_reached) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Reached):
        call_command("load_demo")
