"""The expert-calibrated leaderboard: expert scores correct the judge by prediction-powered inference.

`calibration.cycles.truth` turns a cycle's expert scores into one "expert truth" per response (the active draw reads it
too, so it sits below this package), `build` computes the leaderboard
from plain rows (no database), `snapshots` stores it as a versioned, hashed snapshot, `views`/`api` read it.
"""
