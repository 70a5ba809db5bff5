"""One output format of a download: how the data is rendered to bytes, and how the file is named and typed.

Shared by the report exporters (`reports/exporting.py`) and the gold-label exporters (`adjudication/exporting.py`);
it imports nothing of calibration, so every room may use it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Exporter(Generic[T]):
    """One output format: how to render the data, and how the file is named and typed."""

    extension: str
    content_type: str
    render: Callable[[T], bytes]

    def filename(self, stem: str) -> str:
        return f"{stem}.{self.extension}"
