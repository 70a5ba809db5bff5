"""Template tags of calibration: boxes one room shows on another room's page without that room importing it."""
