"""An artefact's files: what they are called inside its bundle and as downloads, and the citable zip bundle itself
(README.txt, each rendered file, SHA256SUMS; fixed timestamps, so the same files always zip to the same bytes)."""
from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Mapping

from ..models import SnapshotFile

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same snapshot always zips to the same bytes
# A report's stored files by their names in its bundle, in bundle order (a kind with other inputs names its own).
FILE_NAMES = {
    SnapshotFile.Format.JSON: "report.json",
    SnapshotFile.Format.CSV: "tables.csv",
    SnapshotFile.Format.PDF: "report.pdf",
    SnapshotFile.Format.RATINGS: "ratings.csv",
}
EXTENSIONS: dict[str, str] = {SnapshotFile.Format.BUNDLE: "zip", SnapshotFile.Format.RATINGS: "csv"}


def download_name(*, fmt: str, stem: str, subject: str, version: int, inputs_stem: str = "ratings") -> str:
    """A stored file's download name: what it is, its subject and version. Example: `download_name(fmt="ratings",
    stem="irr-report", subject="cycle-3", version=2)` is "ratings-cycle-3-v2.csv"; fmt "bundle" ends in ".zip"."""
    name = inputs_stem if fmt == SnapshotFile.Format.RATINGS else stem
    return f"{name}-{subject}-v{version}.{EXTENSIONS.get(fmt, fmt)}"


def zip_bundle(*, folder: str, entries: list[tuple[str, bytes]]) -> bytes:
    """A zip of `entries` under `folder`, with fixed timestamps and modes: the same entries, the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def citable_bundle(*, files: Mapping[str, bytes], names: Mapping[SnapshotFile.Format, str] | Mapping[str, str],
                   readme: str, folder: str,
                   extra: Mapping[str, bytes] | None = None) -> bytes:
    """The zip every snapshot is cited by: README.txt, each rendered file under its name (`names`: format → file
    name, in bundle order), the `extra` files only the bundle carries, and SHA256SUMS of all of them."""
    entries = [(name, files[fmt]) for fmt, name in names.items()] + list((extra or {}).items())
    sums = "".join(f"{hashlib.sha256(content).hexdigest()}  {name}\n" for name, content in entries)
    return zip_bundle(folder=folder, entries=[("README.txt", readme.encode("utf-8")), *entries,
                                              ("SHA256SUMS", sums.encode("utf-8"))])
