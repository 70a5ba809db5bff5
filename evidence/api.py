"""What every snapshot API shares: the ?version= parameter and a stored bundle's download (cycle, study and
calibrated-leaderboard versions alike)."""
from __future__ import annotations

from typing import ClassVar

from django.db.models import Model, QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import ApiToken

from .downloads import snapshot_file_response
from .kit.serializers import WITH_BODY, SnapshotSerializer
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


VERSION_PARAMETER = OpenApiParameter("version", int, required=False,
                                     description="Report version (default: the newest ready one)")


class SubjectSnapshotAPIView(APIView):
    """One stored version of a subject's snapshot (?version=N, default the newest ready one) with its body, never
    computed here. A subclass declares what differs: the subject's model, the snapshot kind, the serializer, the
    404 texts and (optionally) the schema's operation id; `find` can be overridden to read more with it. The
    serializer is a subclass of the evidence kit's `SnapshotSerializer`."""

    token_scope: ClassVar[object] = ApiToken.Scope.REPORTS_READ
    subject_model: ClassVar[type[Model]]
    kind: ClassVar[str]
    serializer: ClassVar[type[SnapshotSerializer]]
    operation_id: ClassVar[str | None] = None
    version_parameter: ClassVar[OpenApiParameter] = VERSION_PARAMETER
    subject_name: ClassVar[str]  # "cycle {pk}": the 404s name the subject so
    not_found: ClassVar[str] = "{subject} has no report version {version}"
    not_computed: ClassVar[str]  # "{subject} has no computed report yet: …"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "serializer" not in cls.__dict__:  # an intermediate base declares no endpoint
            return

        def get(self: SubjectSnapshotAPIView, request: Request, pk: int) -> Response:
            return self.version_response(request, pk)

        cls.get = extend_schema(
            operation_id=cls.operation_id, parameters=[cls.version_parameter], responses={200: cls.serializer},
        )(get)

    def find(self, subject: Model, version: int | None) -> Snapshot | None:
        return snapshot_for(kind=self.kind, subject=subject.pk, version=version)

    def version_response(self, request: Request, pk: int) -> Response:
        subject = get_object_or_404(self.subject_model, pk=pk)
        version = version_query(request)
        snapshot = self.find(subject, version)
        if snapshot is None:
            name = self.subject_name.format(pk=pk)
            raise NotFound(self.not_found.format(subject=name, version=version) if version else
                           self.not_computed.format(subject=name))
        return Response(self.serializer(snapshot, context={WITH_BODY: True}).data)


class SubjectSnapshotVersionsAPIView(APIView):
    """Every version of a subject's snapshot, newest first, without bodies. A subclass declares the subject's model,
    the kind, the serializer and (optionally) the schema's operation id; it may add a POST that queues a version."""

    token_scope: ClassVar[object] = ApiToken.Scope.REPORTS_READ
    subject_model: ClassVar[type[Model]]
    kind: ClassVar[str]
    serializer: ClassVar[type[SnapshotSerializer]]
    operation_id: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "serializer" not in cls.__dict__:
            return

        def get(self: SubjectSnapshotVersionsAPIView, request: Request, pk: int) -> Response:
            return self.versions_response(pk)

        cls.get = extend_schema(
            operation_id=cls.operation_id, responses={200: cls.serializer(many=True)},
        )(get)

    def versions(self, subject: Model) -> QuerySet[Snapshot]:
        return snapshot_versions(kind=self.kind, subject=subject.pk)

    def versions_response(self, pk: int) -> Response:
        subject = get_object_or_404(self.subject_model, pk=pk)  # bodies only from the version endpoint
        return Response(self.serializer(self.versions(subject), many=True).data)


BUNDLE_VERSION_PARAMETER = OpenApiParameter("version", int, required=False, description="Report version")


class SubjectSnapshotBundleAPIView(APIView):
    """A ready version's citable bundle (?version=N, default the newest ready one): the bytes the page serves. A
    subclass declares the subject's model, the kind, the schema's operation id and how the 404 names the subject."""

    token_scope: ClassVar[object] = ApiToken.Scope.REPORTS_READ
    subject_model: ClassVar[type[Model]]
    kind: ClassVar[str]
    operation_id: ClassVar[str]
    version_parameter: ClassVar[OpenApiParameter] = BUNDLE_VERSION_PARAMETER
    subject_name: ClassVar[str]  # "cycle {pk}"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "operation_id" not in cls.__dict__:
            return

        def get(self: SubjectSnapshotBundleAPIView, request: Request, pk: int) -> HttpResponse:
            return self.bundle_response(request, pk)

        cls.get = extend_schema(
            operation_id=cls.operation_id, parameters=[cls.version_parameter],
            responses={(200, "application/zip"): OpenApiTypes.BINARY},
        )(get)

    def find(self, subject: Model, version: int | None) -> Snapshot | None:
        return snapshot_for(kind=self.kind, subject=subject.pk, version=version, with_payload=False)

    def bundle_response(self, request: Request, pk: int) -> HttpResponse:
        subject = get_object_or_404(self.subject_model, pk=pk)
        version = version_query(request)
        return snapshot_bundle_response(self.find(subject, version), self.subject_name.format(pk=pk), version)
