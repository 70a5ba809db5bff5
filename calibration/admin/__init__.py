"""Django admin for calibration: each module registers its models when imported here.

`cycles` (`calibration/cycles/admin.py`): panels (size warnings) and calibration cycles with their items (models
of `annotations`).
`snapshots`: report snapshots, read-only.
"""
from ..cycles import admin as cycles
from . import snapshots

__all__ = ["cycles", "snapshots"]
