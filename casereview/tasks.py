"""Background work of the TheoBERT audit (django-tasks; `manage.py run_worker`).

An audit's submission changes the run's agreement figures, whose bootstraps take a second or more: the worker
recomputes and stores them (`audit_figures_refresh`), so neither the expert's submission nor the admin's page
waits for them. Tasks call services; the views call `audit_figures_update_later`.
"""
from __future__ import annotations

from typing import TypedDict

from django.db import transaction
from django_tasks import task

from evaluations.models import TheoBertRun

from .theobert import audit_figures_key, audit_figures_refresh


class FiguresTaskOutcome(TypedDict):
    run: int
    updated: bool


@task()
def theobert_audit_figures_task(run_id: int) -> FiguresTaskOutcome:
    """Recompute a run's stored audit figures unless they already match its audits (idempotent)."""
    run = TheoBertRun.objects.filter(pk=run_id).first()
    if run is None:
        return {"run": run_id, "updated": False}
    if (run.audit_figures or {}).get("key") == audit_figures_key(run):
        return {"run": run_id, "updated": False}
    audit_figures_refresh(run=run)
    return {"run": run_id, "updated": True}


def audit_figures_update_later(*, run_id: int) -> None:
    """Have the worker refresh the run's audit figures once the current transaction commits."""
    transaction.on_commit(lambda: theobert_audit_figures_task.enqueue(run_id))
