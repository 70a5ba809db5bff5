"""Operations records: the task worker's heartbeat (read by /healthz)."""
from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """One row per task-worker process, touched every few seconds by a thread of that process."""

    worker_id = models.CharField(max_length=64, primary_key=True)
    hostname = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True, help_text="Last time the worker process reported itself alive.")

    class Meta:
        ordering = ["-beat_at"]
        verbose_name = "worker heartbeat"

    def __str__(self) -> str:
        return f"worker {self.worker_id[:8]} on {self.hostname or '?'} (pid {self.pid})"
