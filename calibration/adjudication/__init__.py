"""Adjudication: detect disagreements among a panel's experts, record gold scores, and export the current gold
labels (`exporting`, the download view and `api`)."""
