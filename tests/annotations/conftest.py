from tests.annotations.factories import world  # noqa: F401  (fixture)
