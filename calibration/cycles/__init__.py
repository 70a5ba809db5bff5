"""Cycles: how a calibration cycle is drawn (sampling, the active strategy), its pages, services and admin."""
