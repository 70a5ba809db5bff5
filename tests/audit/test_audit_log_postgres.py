"""PostgreSQL: an audit row and the action it records commit together or roll back together (issue 33)."""
from __future__ import annotations

import threading

import pytest
from django.db import DatabaseError, connection, transaction

from accounts.models import ApiToken, User
from accounts.privacy import user_pseudonymise
from accounts.services import api_token_create
from audit.models import AuditEvent
from tests.annotations.factories import person

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def seen_from_another_connection(token_name: str) -> tuple[int, int]:
    """(tokens named so, their creation rows) as a second connection sees them: only what was committed."""
    seen: dict[str, int] = {}

    def look() -> None:
        try:
            ids = list(ApiToken.objects.filter(name=token_name).values_list("pk", flat=True))
            seen["tokens"] = len(ids)
            seen["rows"] = AuditEvent.objects.filter(action=AuditEvent.Action.TOKEN_CREATED,
                                                     target_id__in=[str(i) for i in ids]).count()
        finally:
            connection.close()

    thread = threading.Thread(target=look)
    thread.start()
    thread.join()
    return seen["tokens"], seen["rows"]


def test_audit_log_row_commits_and_rolls_back_with_its_action_on_postgresql() -> None:
    assert connection.vendor == "postgresql"
    owner = person()
    api_token_create(user=owner, name="committed", scopes=["reports:read"])
    assert seen_from_another_connection("committed") == (1, 1)

    class Abort(Exception):
        pass

    with pytest.raises(Abort), transaction.atomic():
        api_token_create(user=owner, name="rolled-back", scopes=["reports:read"])
        assert AuditEvent.objects.filter(action=AuditEvent.Action.TOKEN_CREATED).count() == 2  # inside: both
        raise Abort
    assert seen_from_another_connection("rolled-back") == (0, 0)
    assert AuditEvent.objects.filter(action=AuditEvent.Action.TOKEN_CREATED).count() == 1


def test_audit_log_row_that_cannot_be_written_undoes_its_action_on_postgresql() -> None:
    """PostgreSQL refuses a NUL character in jsonb: the pseudonymisation's audit row fails, so nothing of the
    pseudonymisation is kept (the person keeps their address and can still sign in)."""
    admin, expert = person(User.Role.ADMIN), person()
    email = expert.email
    with pytest.raises(DatabaseError):
        user_pseudonymise(user=expert, actor=admin, reference="ticket \x00 7")
    expert.refresh_from_db()
    assert expert.email == email and expert.is_active and expert.has_usable_password()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.PSEUDONYMISED).exists()
    user_pseudonymise(user=expert, actor=admin, reference="ticket 7")
    assert AuditEvent.objects.filter(action=AuditEvent.Action.PSEUDONYMISED, subject_user=expert).count() == 1
