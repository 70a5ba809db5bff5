"""Adjudication: detect disagreements among a panel's experts and record gold scores."""
