"""After the flush that ends every transactional test, the database is as `migrate` left it (tests/conftest.py):
the data migrations' rows are back with their keys, content types and permissions too, and the next row a test
creates gets a new key. So tests pass alone, in any subset and in any order."""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command

from evaluations.models import GenerationCondition, RubricVersion, Tradition
from tests.evaluations.reference_rows import methodology_reference_rows, stored_reference_rows


def flush() -> None:
    """What pytest-django (Django's TransactionTestCase) runs after a transactional test."""
    call_command("flush", verbosity=0, interactive=False, stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_a_flush_puts_back_the_rows_the_migrations_wrote() -> None:
    keys = {"rubric": RubricVersion.objects.get(version="1.0").pk,
            "traditions": sorted(Tradition.objects.values_list("pk", "key")),
            "standard": GenerationCondition.objects.standard().pk}
    RubricVersion.objects.create(version="9.9", notes="made by a test")
    Tradition.objects.filter(key="pentecostal").update(name="Changed by a test")

    flush()

    assert stored_reference_rows() == methodology_reference_rows()
    assert not RubricVersion.objects.filter(version="9.9").exists()
    assert {"rubric": RubricVersion.objects.get(version="1.0").pk,
            "traditions": sorted(Tradition.objects.values_list("pk", "key")),
            "standard": GenerationCondition.objects.standard().pk} == keys
    assert ContentType.objects.filter(app_label="evaluations", model="tradition").exists()
    assert Permission.objects.filter(codename="change_tradition").exists()
    # The sequences are past the restored keys: a new row never collides with one.
    new = GenerationCondition.objects.create(name="de", language="de")
    assert new.pk > keys["standard"]


@pytest.mark.django_db(transaction=True)
def test_a_flush_after_the_reference_rows_were_deleted_puts_them_back() -> None:
    RubricVersion.objects.all().delete()
    Tradition.objects.all().delete()
    GenerationCondition.objects.all().delete()

    flush()

    assert stored_reference_rows() == methodology_reference_rows()
    assert GenerationCondition.objects.filter(is_standard=True).count() == 1
