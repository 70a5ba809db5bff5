"""Django admin for calibration: each module registers its models when imported here.

`cycles`: panels (size warnings) and calibration cycles with their items (models of `annotations`).
`delphi`: Delphi studies, rounds and responses.
`snapshots`: report snapshots, read-only.
"""
from . import cycles, delphi, snapshots

__all__ = ["cycles", "delphi", "snapshots"]
