from tests.annotations.factories import world  # noqa: F401  (the shared two-panel world)
