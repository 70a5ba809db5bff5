"""Delphi studies: experts set a rubric version's weights by consensus over rounds (methodology §4.3).

Layout (layers checked by the `delphi-layers` contract in pyproject.toml, top to bottom): `urls`; `admin`,
`views`, `management/commands/notify_due.py` (reminders), `demo`; `forms`, `report` and `exporting` (the study
report as JSON); `services` (writes); `selectors` (reads; expert-facing ones carry no other expert's identity) and
`rescoring` (the judge's scores under new weights); `models` (tables keep their `calibration_*` names), `schema`
(the JSON shapes stored and exported), `allocation` and `svg` (pure helpers). URLs are mounted at /delphi/ under
the namespace `delphi`.
"""
