"""What every browser test needs: Debian's Chromium, its flags, and where screenshots go."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium's connections are refused by this closed network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
ARTIFACTS = Path(__file__).parent / "artifacts"


def browser_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail (never skip) without Chromium; let the test's ORM calls run beside Playwright's event loop."""
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are not async code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's Chromium is missing at {CHROMIUM}: run `apt-get update && apt-get install -y chromium`. "
                    "This browser test must not be skipped.")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)


def launch(playwright: Any) -> Any:
    """Debian's Chromium, headless, with the flags this machine needs."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
