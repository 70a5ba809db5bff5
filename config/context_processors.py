"""Template context of operations: is a task worker alive? (`templates/includes/worker_notice.html` reads it.)"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .health import worker_status


def worker(request: HttpRequest) -> dict[str, Any]:
    """`worker_status` (`.alive`, `.seen_seconds_ago`): read only when a template uses it (one query)."""
    return {"worker_status": SimpleLazyObject(worker_status)}
