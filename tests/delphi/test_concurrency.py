"""A submission racing the close of its round is either counted in the round's statistics or refused (PostgreSQL)."""
from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from delphi.models import DelphiResponse
from delphi.services import delphi_response_submit, delphi_round_close
from tests.delphi.factories import allocation, delphi_world_build, submit_all


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_submission_racing_the_round_close_is_counted_or_refused() -> None:
    world = delphi_world_build()
    submit_all(world, world.round(1), [0, 1, 2, 3])  # four of five; the fifth answers while the admin closes
    late = world.others[3]
    barrier = threading.Barrier(2)
    outcome: dict[str, str] = {}

    def submit() -> None:
        try:
            barrier.wait()
            delphi_response_submit(round=world.round(1), expert=late, allocation=allocation(world.structure, shift=-3))
            outcome["submit"] = "stored"
        except ValidationError:
            outcome["submit"] = "refused"
        finally:
            connection.close()

    def close() -> None:
        try:
            barrier.wait()
            delphi_round_close(round=world.round(1), actor=world.admin)
            outcome["close"] = "closed"
        finally:
            connection.close()

    threads = [threading.Thread(target=submit), threading.Thread(target=close)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    round1 = world.round(1)
    stored = DelphiResponse.objects.filter(round=round1).count()
    assert outcome["close"] == "closed" and outcome["submit"] in ("stored", "refused")
    assert round1.responded == stored == (5 if outcome["submit"] == "stored" else 4)
    assert round1.summary["weights"]["textual"]["n"] == stored
