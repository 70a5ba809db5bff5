"""Pure numpy statistics for FaithBench Calibration. Imports nothing from Django."""
