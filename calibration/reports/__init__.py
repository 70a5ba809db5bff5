"""The calibration report: experts among themselves, the judge against the panel and against gold."""
