"""Cycles: how a calibration cycle is drawn and handed out, and its pages.

`sampling` (the draw, pure) and `active` (Neyman allocation and PPS for the active strategy, pure); `truth` (the
experts' truth per response, read by the active draw and by the calibrated leaderboard above); `selectors` (pool,
panels and their warnings, progress, the active design) and `services` (commit a draw, assign its items, panels);
`forms`, `views` and `urls` (overview, panels, draw, one cycle, progress); `admin` (panels and cycles, registered
from `calibration/admin/`). The room imports no other room of calibration.
"""
