"""Adjudication's pages and a cycle's gold-label download, included by `calibration/urls.py` without a namespace of
their own, so their names stay `calibration:<name>` (access.policy.URL_ACTIONS keys)."""
from django.urls import path

from . import views

urlpatterns = [
    path("cycles/<int:pk>/gold/", views.gold_export, name="gold_export"),
    # Adjudication is for panel leads and adjudicators as well as admins; the views check who may decide what.
    path("adjudication/", views.queue, name="adjudication_queue"),
    path("adjudication/<int:item_id>/", views.item, name="adjudication_item"),
    path("adjudication/<int:item_id>/reopen/<str:public_id>/", views.reopen, name="adjudication_reopen"),
]
