"""Panel health (every expert's severity, fit, agreement, drift and fatigue, for the panel's lead and admins) and
My calibration (each expert's own feedback after a cycle closes). Statistics: `stats/raters.py`."""
