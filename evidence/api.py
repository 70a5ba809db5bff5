"""What every snapshot API shares: the ?version= parameter and a stored bundle's download (cycle, study and
calibrated-leaderboard versions alike)."""
from __future__ import annotations

from django.http import HttpResponse
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from .downloads import snapshot_file_response
from .models import Snapshot, SnapshotFile
from .selectors import snapshot_file_name, snapshot_for, snapshot_versions, version_param


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


def snapshot_found(snapshot: Snapshot | None, subject: str, version: int | None, hint: str) -> Snapshot:
    """The snapshot, or 404 saying what is missing (a version, or any computed report)."""
    if snapshot is None:
        raise NotFound(f"{subject} has no report version {version}" if version else
                       f"{subject} has no computed report yet: {hint}")
    return snapshot


def snapshot_version_response(request: Request, *, kind: str, subject: str | int, name: str, hint: str,
                              serializer: type[serializers.Serializer]) -> Response:
    """One stored version of a subject (?version=N, default the newest ready one) with its body: every report's GET."""
    version = version_query(request)
    snapshot = snapshot_found(snapshot_for(kind=kind, subject=subject, version=version), name, version, hint)
    return Response(serializer(snapshot, context={"with_report": True}).data)


def snapshot_versions_response(*, kind: str, subject: str | int,
                               serializer: type[serializers.Serializer]) -> Response:
    """Every version of a subject, newest first, without bodies: every report's version list."""
    return Response(serializer(snapshot_versions(kind=kind, subject=subject), many=True).data)
