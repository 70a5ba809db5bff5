"""Errors of an import: every bad row is reported at once, with file, line and field."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class RowError:
    """One problem in an input file. Messages never quote free text (held-out prompts stay out of logs)."""

    file: str
    line: int
    field: str
    message: str
    column: int = 0  # for a syntax error: where on the line the parser stopped (1-based; 0: not known)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        if self.line and self.column:
            where += f":{self.column}"
        return f"{where}:{self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ImportFailed(Exception):
    """Raised when a file has errors; nothing has been written."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = sorted(errors)
        super().__init__(self.summary())

    def summary(self, limit: int | None = None) -> str:
        shown = self.errors if limit is None else self.errors[:limit]
        lines = [f"{len(self.errors)} error(s); nothing was imported."] + [str(e) for e in shown]
        if limit is not None and len(self.errors) > limit:
            lines.append(f"… and {len(self.errors) - limit} more.")
        return "\n".join(lines)
