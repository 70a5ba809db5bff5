from django.urls import path

from . import lead_views, views

app_name = "annotations"

# Items are addressed by the assignment's opaque public id, never by a sequential key.
urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/", views.next_item, name="next"),
    path("lead/", views.lead, name="lead"),
    path("lead/assignments/", lead_views.assignments, name="lead_assignments"),
    path("a/<str:public_id>/", views.item, name="item"),
    path("a/<str:public_id>/draft/", views.draft, name="draft"),
    path("a/<str:public_id>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("a/<str:public_id>/submit/", views.submit, name="submit"),
    path("a/<str:public_id>/skip/", views.skip, name="skip"),
    path("a/<str:public_id>/undo/", views.undo, name="undo"),
    path("a/<str:public_id>/reopen/", views.reopen, name="reopen"),
    path("a/<str:public_id>/reassign/", lead_views.reassign, name="reassign"),
]
