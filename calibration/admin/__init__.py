"""Django admin for calibration: each module registers its models when imported here.

`cycles`: panels (size warnings) and calibration cycles with their items (models of `annotations`).
`delphi`: Delphi studies, rounds and responses.
Snapshots (every computed artefact) are in `evidence/admin.py`.
"""
from . import cycles, delphi

__all__ = ["cycles", "delphi"]
