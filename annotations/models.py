"""Assignments, blind expert scores, adjudication decisions and case reviews (built in later issues)."""
