"""Django admin for calibration: each module registers its models when imported here.

`cycles`: panels (size warnings) and calibration cycles with their items (models of `annotations`).
`snapshots`: report snapshots, read-only.
"""
from . import cycles, snapshots

__all__ = ["cycles", "snapshots"]
