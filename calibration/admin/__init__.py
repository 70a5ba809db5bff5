"""Django admin for calibration: each module registers its models when imported here.

`cycles` (`calibration/cycles/admin.py`): panels (size warnings) and calibration cycles with their items (models
of `annotations`).
Snapshots (every computed artefact) are in `evidence/admin.py`.
"""
from ..cycles import admin as cycles

__all__ = ["cycles"]
