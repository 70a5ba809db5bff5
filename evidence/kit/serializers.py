"""The one API serializer base of a stored version, whatever its kind: what it was computed from and, when the view
shows one version (context `WITH_BODY`) and it is ready, its body. A kind's serializer subclasses it, adding its
subject's fields and its body field (`source="body"`), and may type the body (`body_of`)."""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from ..models import Snapshot
from .trees import JsonObject

WITH_BODY = "with_body"  # the context flag of a view that shows one version with its body


class SnapshotSerializer(serializers.Serializer):
    """A stored version: its number, state, seed, resamples, input hash, software and times; a subclass adds the
    subject and the body."""

    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Snapshot.Status.choices)
    progress = serializers.IntegerField(help_text="Percent done while computing.")
    error = serializers.CharField(allow_blank=True)
    seed = serializers.IntegerField()
    n_resamples = serializers.IntegerField()
    input_hash = serializers.CharField(allow_blank=True,
                                       help_text="SHA-256 of the version's input file (named in its bundle's README).")
    software = serializers.DictField(child=serializers.CharField(), help_text="What computed it: name → version.")
    requested_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def body_of(self, payload: JsonObject) -> Any:
        """The body as the API shows it (default: the stored payload as it is)."""
        return payload

    def to_representation(self, instance: Snapshot) -> dict[str, Any]:
        payload = instance.payload if self.context.get(WITH_BODY) else None  # deferred in lists: not read
        instance.body = self.body_of(payload) if payload else None  # type: ignore[attr-defined]
        return super().to_representation(instance)
