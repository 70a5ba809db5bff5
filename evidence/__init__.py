"""Evidence: the one versioned, hashed, immutable snapshot of every computed artefact (cycle and study reports,
calibrated leaderboards, case-review reports, IRT fits, bias checks), its stored files and their downloads."""
