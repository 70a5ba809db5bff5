"""Blinding tests search every response an expert receives for seeded markers: shared pieces."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HX = {"HTTP_HX_REQUEST": "true"}


@dataclass(frozen=True)
class Marker:
    what: str
    value: str


def leaks(response: Any, markers: list[Marker]) -> list[str]:
    """Every marker found in the response body or headers (case-insensitive)."""
    haystack = (response.content.decode("utf-8", "replace") + "\n"
                + "\n".join(f"{k}: {v}" for k, v in response.items())).lower()
    return [f"{m.what} ({m.value!r})" for m in markers if m.value.lower() in haystack]
