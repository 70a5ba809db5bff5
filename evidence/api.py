"""What every snapshot API shares: the ?version= parameter and a stored bundle's download (cycle, study and
calibrated-leaderboard versions alike)."""
from __future__ import annotations

from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from .downloads import snapshot_file_response
from .models import Snapshot, SnapshotFile
from .selectors import snapshot_file_name, version_param


def version_query(request: Request) -> int | None:
    """The API's ?version= (400 naming the field when it is not a whole number ≥ 1)."""
    try:
        return version_param(request.query_params.get("version"))
    except ValueError as exc:
        raise serializers.ValidationError({"version": str(exc).removeprefix("version: ")}) from exc


def snapshot_bundle_response(snapshot: Snapshot | None, subject: str, version: int | None) -> HttpResponse:
    """A ready snapshot's stored zip as the API's download (404 naming what is missing): every report's bundle."""
    if snapshot is None or not snapshot.is_ready:
        raise NotFound(f"{subject} has no ready report version" + (f" {version}" if version else ""))
    response = snapshot_file_response(
        snapshot=snapshot, fmt=SnapshotFile.Format.BUNDLE, content_type="application/zip",
        filename=snapshot_file_name(snapshot=snapshot, fmt=SnapshotFile.Format.BUNDLE))
    if response is None:  # pragma: no cover - a ready snapshot has every file
        raise NotFound("the bundle is missing from this version")
    return response
