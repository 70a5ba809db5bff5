"""Shared fixtures: reference data comes from the real data migration, so tests see rubric v1.0 as shipped."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Browser tests run last; tests marked `postgres` are reported as skipped on SQLite with the reason.

    pytest-django runs transactional tests after the others, but pytest-playwright's session-scoped
    `browser_name` parameter makes pytest regroup the tests afterwards, which put the slow browser tests first on
    an xdist worker. A stable sort after every other hook (pytest-randomly's shuffle included) puts them back at
    the end. Correctness does not depend on it: a flush puts the migrations' rows back (below).
    """
    items.sort(key=lambda item: "e2e" in item.keywords)
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL: runs in the DATABASE_URL pass of .ci/run")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rubric_v1(db):  # type: ignore[no-untyped-def]
    from evaluations.models import RubricVersion

    return RubricVersion.objects.get(version="1.0")


@pytest.fixture
def immediate_tasks(settings):
    """Background tasks (report snapshots) run at once when their request commits, in-process."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


# --- reference data after a flush -------------------------------------------------------------------------
# A transactional test (`transaction=True`, `live_server`) ends with Django's `flush`: every table emptied, then
# `post_migrate` re-creates the content types and permissions. What the data migrations wrote (the traditions,
# rubric v1.0, the standard generation condition) is not re-created, so whatever test ran next on that database
# found none. Django's `serialized_rollback` answers with a copy of the whole database, content types included,
# re-inserted before the test: after a plain transactional test's flush those content types were already back
# (with new keys), and the copy failed with "UNIQUE constraint failed: django_content_type".
# Instead, the rows the migrations wrote are copied once per test database, right after it is created, and put back
# by a `post_migrate` receiver whenever a flush emptied them: every test, in any order and any subset, starts
# with the database as `migrate` leaves it. No test needs `serialized_rollback`.

# Re-created by Django's own post_migrate receivers (contenttypes, auth): never copied.
POST_MIGRATE_MADE = ("contenttypes.contenttype", "auth.permission")


class MigrationRows:
    """The rows the migrations wrote into a fresh test database, per model, restorable after a flush."""

    def __init__(self, using: str) -> None:
        from django.apps import apps
        from django.core import serializers

        self.using = using
        self.rows: dict[str, str] = {}  # model label -> its rows as Django's JSON serialization
        for model in apps.get_models(include_auto_created=True):
            meta = model._meta
            if meta.label_lower in POST_MIGRATE_MADE or not meta.managed or meta.proxy:
                continue
            if not model._default_manager.using(using).exists():
                continue
            for field in meta.concrete_fields:
                if field.related_model is not None and field.related_model._meta.label_lower in POST_MIGRATE_MADE:
                    raise RuntimeError(f"{meta.label}.{field.name} points at a row that post_migrate re-creates "
                                       "under a new key; copying it by key would break")
            self.rows[meta.label_lower] = serializers.serialize("json", model._default_manager.using(using)
                                                                .order_by("pk"))

    def restore(self, app_config: Any, using: str, plan: Any = None, **_kwargs: Any) -> None:
        """post_migrate receiver: put this app's rows back into those of its tables that a flush emptied.

        `migrate` (which passes its plan) wrote them itself; only `flush` (no plan) leaves them out. Inside one
        transaction, so foreign keys (deferred on SQLite and PostgreSQL) are checked once every row is back."""
        from django.apps import apps
        from django.core import serializers
        from django.core.management.color import no_style
        from django.db import connections, transaction

        if plan is not None or using != self.using:
            return
        models = [apps.get_model(label) for label in self.rows]
        emptied = [model for model in models if model._meta.app_config is app_config
                   and not model._default_manager.using(using).exists()]
        if not emptied:
            return
        database = connections[using]
        with transaction.atomic(using=using):
            for model in emptied:
                for row in serializers.deserialize("json", self.rows[model._meta.label_lower], using=using):
                    row.save(using=using)
            with database.cursor() as cursor:  # the next row a test creates gets the next key, as after loaddata
                for sql in database.ops.sequence_reset_sql(no_style(), emptied):
                    cursor.execute(sql)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database, plus the restoring of its migration-made rows after every flush."""
    from django.db import DEFAULT_DB_ALIAS
    from django.db.models.signals import post_migrate

    with django_db_blocker.unblock():
        rows = MigrationRows(DEFAULT_DB_ALIAS)
    post_migrate.connect(rows.restore, weak=False, dispatch_uid="tests-migration-rows")
    yield
    post_migrate.disconnect(dispatch_uid="tests-migration-rows")
