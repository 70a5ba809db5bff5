"""Shared steps of the scoring page's browser tests: a world with a known password, signing in."""
from __future__ import annotations

import re
import time
from typing import Any

from django.db import OperationalError

from tests.annotations.factories import World, world_build

PASSWORD = "pw-e2e-resilience-9753"


def scoring_world() -> World:
    """The annotations test world; every person in it signs in with PASSWORD."""
    world = world_build()
    for user in (world.expert, world.other_expert, world.other_panel_expert, world.lead, world.admin):
        user.set_password(PASSWORD)
        user.save()
    return world


def sign_in(page: Any, base: str, email: str, *, landing: str = r"/") -> None:
    """Sign in through the real form and wait for the page it lands on."""
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(re.compile(landing))


def read(query, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    """`query()`, read again while the live server's thread holds SQLite's shared-cache table lock."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return query()
        except OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
