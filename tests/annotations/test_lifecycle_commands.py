"""close_cycle / reopen_cycle: the lifecycle services from the command line, with the same refusals."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotations.models import CalibrationCycle, CycleEvent

pytestmark = pytest.mark.django_db


def status(world) -> str:  # type: ignore[no-untyped-def]
    return CalibrationCycle.objects.get(pk=world.cycle.pk).status


def test_close_and_reopen_from_the_command_line(world, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("close_cycle", str(world.cycle.pk), "--by", world.admin.email, "--reason", "round over")
    assert status(world) == "closed" and "closed for scoring" in capsys.readouterr().out
    with pytest.raises(CommandError, match="already closed"):
        call_command("close_cycle", world.cycle.name, "--by", world.admin.email)
    with pytest.raises(CommandError, match="only staff"):
        call_command("reopen_cycle", world.cycle.name, "--by", world.lead.email, "--reason", "please")
    with pytest.raises(CommandError, match="reason"):
        call_command("reopen_cycle", world.cycle.name, "--by", world.admin.email, "--reason", " ")
    assert status(world) == "closed"
    call_command("reopen_cycle", world.cycle.name, "--by", world.admin.email, "--reason", "late panel member")
    assert status(world) == "open"
    assert list(CycleEvent.objects.values_list("kind", "reason")) == [("closed", "round over"),
                                                                     ("reopened", "late panel member")]
    with pytest.raises(CommandError, match="no calibration cycle"):
        call_command("close_cycle", "no such cycle", "--by", world.admin.email)
