"""Browser tests on pytest-playwright's fixtures (`browser`, `new_context`, `page`), driving the system's Chromium
when the machine has one (Debian's `chromium`), else the browser `playwright install chromium` downloaded.

`make test` provisions one of the two first (the Makefile's `browser` target); without either, Playwright's own
error says what to install and the test fails — browser tests are never skipped. Failure screenshots go to
tests/e2e/artifacts/failures/ (`--screenshot=only-on-failure` in pyproject.toml's pytest options).
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.signals import request_finished, request_started

ARTIFACTS = Path(__file__).parent / "artifacts"
# Without the background-networking flags Chromium's connections are refused by a closed network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def system_chromium() -> str | None:
    """$E2E_CHROMIUM, else the first Chromium on PATH; None means Playwright's own download."""
    configured = os.environ.get("E2E_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch options, pointed at the system's Chromium when there is one."""
    options = {**browser_type_launch_args, "args": [*browser_type_launch_args.get("args", []), *CHROMIUM_ARGS]}
    executable = system_chromium()
    if executable:
        options["executable_path"] = executable
    return options


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


@pytest.fixture(scope="session", autouse=True)
def _django_beside_playwright() -> None:
    """Playwright's sync API keeps an event loop running in this thread for the rest of the session; the tests'
    own ORM calls are not async code, so Django's async-safety check is told so (once a browser test runs)."""
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def new_context(new_context: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """pytest-playwright's context factory; a page that breaks the Content-Security-Policy fails its test."""
    violations: list[str] = []

    def create(**kwargs: Any) -> Any:
        context = new_context(**kwargs)
        context.set_default_timeout(10_000)
        context.on("console", lambda message: violations.append(f"{message.text} ({message.location['url']})")
                   if "Content Security Policy" in message.text else None)
        return context

    yield create
    assert violations == [], violations


# --- the live server is quiet before the database is flushed ----------------------------------------------
# A page that closes sends its last autosave by beacon, and its heartbeat may be in flight: the live server
# thread then writes while the test's teardown flushes the tables, and SQLite's shared in-memory database
# answers "database table is locked" (the flush fails and the next test finds the previous one's rows).
# Requests are counted with Django's request signals; teardown closes the test's pages and waits for quiet.

_traffic_lock = threading.Lock()
_traffic = {"active": 0, "last": 0.0}
QUIET_SECONDS = 0.5


def _request_started(**_kwargs: Any) -> None:
    with _traffic_lock:
        _traffic["active"] += 1
        _traffic["last"] = time.monotonic()


def _request_finished(**_kwargs: Any) -> None:
    with _traffic_lock:
        _traffic["active"] -= 1
        _traffic["last"] = time.monotonic()


request_started.connect(_request_started, weak=False, dispatch_uid="e2e-traffic-started")
request_finished.connect(_request_finished, weak=False, dispatch_uid="e2e-traffic-finished")


def wait_for_quiet_server(timeout: float = 15.0) -> None:
    """Until no request has been running for QUIET_SECONDS (or `timeout` passed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _traffic_lock:
            quiet = _traffic["active"] <= 0 and time.monotonic() - _traffic["last"] >= QUIET_SECONDS
        if quiet:
            return
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def _quiet_server_before_flush(request: pytest.FixtureRequest) -> Iterator[None]:
    """For live-server tests: torn down before the database fixture (which it requests), so the flush runs
    only after the test's pages are closed and the server has answered their last requests."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    if "browser" in request.fixturenames:
        for context in list(request.getfixturevalue("browser").contexts):
            try:
                context.close()
            except Exception:  # noqa: BLE001 — already closed with its browser; nothing left to send
                pass
    wait_for_quiet_server()
