import pytest
from django.core.cache import cache

from tests.delphi.factories import dworld  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _fresh_rate_limits():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()
