"""Shared fixtures: reference data comes from the real data migration, so tests see rubric v1.0 as shipped."""
from __future__ import annotations

import pytest
from django.db import connection


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Browser tests run last; tests marked `postgres` are reported as skipped on SQLite with the reason.

    The browser tests are transactional (a live server) and leave the database flushed. pytest-django runs such
    tests after the others, but pytest-playwright's session-scoped `browser_name` parameter makes pytest regroup
    the tests afterwards, which put them first on an xdist worker and emptied the reference data under the
    ordinary tests that followed. A stable sort after every other hook restores the order.
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
