"""Signals of the annotations app, for the apps above it (which annotations may not import)."""
from django.dispatch import Signal

# Sent after the transaction that finished an assignment (submitted or skipped) commits; `item_id` is its
# cycle item. calibration's adjudication listens: the item may now wait for its panel lead's decision.
assignment_finished = Signal()
