"""Delphi weight rounds (issue: adjudication and Delphi)."""
