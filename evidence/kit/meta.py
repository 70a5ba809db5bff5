"""What every artefact records about itself: which snapshot it is (`SnapshotMeta`), the software that made it
(`software_versions`, stored on every snapshot, computed or recorded, and named in every bundle's README), and the
bootstrap defaults a computed kind takes unless asked otherwise."""
from __future__ import annotations

import functools
import platform
from dataclasses import dataclass
from importlib import metadata

DEFAULT_SEED = 20260101
DEFAULT_RESAMPLES = 1000
# What computes the numbers: the versions every snapshot stores.
SOFTWARE = ("django", "numpy", "scipy", "krippendorff", "scikit-learn")


@dataclass
class SnapshotMeta:
    """Which snapshot this is: its version and the hash of its input rows (ratings.csv)."""

    version: int
    input_hash: str
    input_file: str
    requested_at: str


def software_versions() -> dict[str, str]:
    """Versions of what computed the numbers: Python and each package of `SOFTWARE` (read once per process)."""
    return dict(_loaded_versions())


@functools.cache
def _loaded_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in SOFTWARE:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are in the lock file
            versions[package] = "unknown"
    return versions


def software_line(software: dict[str, str] | None) -> str:
    """The versions as a bundle's README names them: "django 5.2, krippendorff 0.8, …" (sorted by name)."""
    return ", ".join(f"{name} {version}" for name, version in sorted((software or {}).items()))
