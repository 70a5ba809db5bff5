"""Delphi studies, rounds and allocations."""
