"""The frozen reference-data migration and the live methodology module still agree, row for row."""
from __future__ import annotations

import pytest

from evaluations.models import RubricVersion, Tradition
from evaluations.services import reference_data_ensure
from tests.evaluations.reference_rows import methodology_reference_rows, stored_reference_rows

pytestmark = pytest.mark.django_db


def test_the_data_migration_wrote_exactly_the_methodologys_traditions_and_rubric_v1() -> None:
    # The test database was built by running the migrations, so these rows are the migration's.
    assert stored_reference_rows() == methodology_reference_rows()


def test_reference_data_ensure_recreates_the_migrations_rows() -> None:
    migrated = stored_reference_rows()
    RubricVersion.objects.filter(version="1.0").delete()
    Tradition.objects.all().delete()
    reference_data_ensure()
    assert stored_reference_rows() == migrated
