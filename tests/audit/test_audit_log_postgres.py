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


def test_audit_log_rows_cannot_be_updated_or_deleted_even_by_hand_written_sql_on_postgresql() -> None:
    """The trigger of audit migration 0002 refuses what the model's guards cannot see: a query that bypasses the
    ORM. The retention prune still removes old rows (its transaction, and only it, is let through)."""
    from datetime import timedelta

    from django.utils import timezone

    from audit.services import audit_prune

    owner = person()
    api_token_create(user=owner, name="kept", scopes=["reports:read"])
    event = AuditEvent.objects.get(action=AuditEvent.Action.TOKEN_CREATED)
    for statement in ("UPDATE audit_auditevent SET target = 'edited' WHERE id = %s",
                      "DELETE FROM audit_auditevent WHERE id = %s"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [event.pk])
    event.refresh_from_db()
    assert event.target != "edited"

    with connection.cursor() as cursor:  # age the row past the retention time: refused, as any update is
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            cursor.execute("UPDATE audit_auditevent SET at = at - interval '400 days' WHERE id = %s", [event.pk])
    assert audit_prune(now=timezone.now() + timedelta(days=400), days=30) >= 1
    assert not AuditEvent.objects.filter(pk=event.pk).exists()
    assert AuditEvent.objects.filter(action=AuditEvent.Action.AUDIT_PRUNED).count() == 1
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM audit_auditevent")  # the prune's permission ended with its transaction
