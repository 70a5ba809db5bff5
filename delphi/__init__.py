"""Delphi studies: experts set a rubric version's weights by consensus over rounds (methodology §4.3).

Layout: `models` (studies, rounds, responses, allocations; tables keep their `calibration_*` names),
`allocation` and `svg` (pure helpers), `selectors` (reads; expert-facing ones carry no other expert's identity),
`rescoring` (the judge's scores under new weights), `services` (writes), `report` and `exporting` (the study
report as JSON), `forms`, `views`, `urls` (mounted at /delphi/, namespace `delphi`), `admin`, `demo`,
`management/commands/notify_due.py` (reminders).
"""
