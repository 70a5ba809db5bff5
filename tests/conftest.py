"""Shared fixtures: reference data comes from the real data migration, so tests see rubric v1.0 as shipped."""
from __future__ import annotations

import pytest
from django.db import connection


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked `postgres` need PostgreSQL; on SQLite they are reported as skipped with the reason."""
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
