"""Every registered admin changelist costs the same number of queries for few rows and for more rows.

The models come from `admin.site._registry`, so a newly registered model is covered at once — and this
test fails until tests/growth.py gives it rows at both sizes.
"""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from tests.growth import LARGE, SMALL, base_build, grow, queries

pytestmark = pytest.mark.django_db
MAX_QUERIES = 12  # session, user, count(s), page, filters' choices, a few prefetches


def changelists(client) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """{model label: (queries, rows listed)} for every registered changelist, as a superuser."""
    found = {}
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        n, response = queries(lambda url=url: client.get(url))
        assert response.status_code == 200, (model._meta.label, response.status_code)
        found[model._meta.label] = (n, response.context["cl"].result_count)
    return found


def test_every_admin_changelist_uses_a_constant_number_of_queries(client, tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = base_build()
    client.force_login(base.admin)
    grow(base, SMALL, tag="small", tmp_path=tmp_path)
    small = changelists(client)
    grow(base, LARGE, tag="large", tmp_path=tmp_path)
    large = changelists(client)

    not_grown = {label: (small[label][1], large[label][1]) for label in small
                 if not 0 < small[label][1] < large[label][1]}
    assert not not_grown, f"give these models rows in tests/growth.py (rows small, large): {not_grown}"
    growing = {label: (small[label][0], large[label][0]) for label in small if small[label][0] != large[label][0]}
    assert not growing, f"queries grow with the rows (small, large): {growing}"
    too_many = {label: counts[0] for label, counts in large.items() if counts[0] > MAX_QUERIES}
    assert not too_many, too_many

