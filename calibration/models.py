"""Panels, calibration cycles, IRR, bias and Delphi analyses (built in later issues)."""
