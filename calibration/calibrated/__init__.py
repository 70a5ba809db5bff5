"""The expert-calibrated leaderboard: expert scores correct the judge by prediction-powered inference.

`truth` turns a cycle's expert scores into one "expert truth" per response, `build` computes the leaderboard
from plain rows (no database), `snapshots` stores it as a versioned, hashed snapshot, `views`/`api` read it.
"""
