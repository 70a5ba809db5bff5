import pytest
from django.core.cache import cache

from tests.annotations.factories import world  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _fresh_rate_limits():  # type: ignore[no-untyped-def]
    """allauth keeps rate-limit counters in the cache; every test starts with none."""
    cache.clear()
    yield
    cache.clear()
