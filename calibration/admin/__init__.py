"""Django admin for calibration: each module registers its models when imported here.

`cycles` (`calibration/cycles/admin.py`): panels (size warnings) and calibration cycles with their items (models
of `annotations`).
`delphi`: Delphi studies, rounds and responses.
Snapshots (every computed artefact) are in `evidence/admin.py`.
"""
from ..cycles import admin as cycles
from . import delphi

__all__ = ["cycles", "delphi"]
