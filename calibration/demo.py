"""Demo people, panels and calibration cycles, created after the benchmark data is loaded."""
from __future__ import annotations

from django.contrib.auth import get_user_model

DEMO_PASSWORD = "faithbench-demo"  # noqa: S105 - local demo only, printed by load_demo


def demo_people_create() -> list[tuple[str, str, str]]:
    """Create the demo accounts; returns (role, email, password) for each login to print."""
    User = get_user_model()
    logins = []
    admin, created = User.objects.get_or_create(
        email="admin@faithbench.test",
        defaults={"role": User.Role.ADMIN, "is_staff": True, "is_superuser": True, "display_name": "Demo Admin"},
    )
    if created:
        admin.set_password(DEMO_PASSWORD)
        admin.save()
    logins.append(("admin", admin.email, DEMO_PASSWORD))
    return logins
