"""Template context of operations: is a task worker alive? (`templates/includes/worker_notice.html` reads it.)"""
from __future__ import annotations

from typing import TypedDict

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .health import worker_status


class WorkerContext(TypedDict):
    worker_status: SimpleLazyObject  # a lazy WorkerStatus


def worker(request: HttpRequest) -> WorkerContext:
    """`worker_status` (`.alive`, `.seen_seconds_ago`): read only when a template uses it (one query)."""
    return {"worker_status": SimpleLazyObject(worker_status)}
