"""What the audit trail hears from the apps above it: role and access changes with before/after, panel
membership and leads, judge runs started and cancelled (the study and pairwise judges' too), evidence versions
requested and recorded.

The recorder (`audit.services.audit_record`) sits below `evaluations`, so it cannot know these models; this
module sits at the top (`config`, which may import every app) and connects receivers for them once, from
`OperationsConfig.ready`. Each receiver runs inside the `save()` (or membership change) it hears, so its row is
written in that write's transaction: both commit or neither does. The actor is the signed-in user of the request
being served (`audit.context`); the worker and commands act as the system. Writes by queryset `update()` send
no signal: those services record explicitly (API token revocation, evidence files stored).
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_save, pre_save

from accounts.models import ExpertProfile
from annotations.models import Panel
from audit.models import AuditEvent
from audit.services import audit_record
from calibration.models import StudyJudgeRun
from evaluations.models import JudgeRun, PairwiseRun
from evidence.models import Snapshot

Action = AuditEvent.Action
USER_FIELDS = ("role", "is_staff", "is_superuser", "is_active")
PANEL_FIELDS = ("name", "lead_id", "tradition_id")
_BEFORE = "_audit_before"


def _tracked(update_fields: Any, fields: tuple[str, ...]) -> bool:
    if update_fields is None:
        return True
    named = {str(f).removesuffix("_id") for f in update_fields}
    return any(f.removesuffix("_id") in named for f in fields)


def _remember(sender: Any, instance: Any, fields: tuple[str, ...], update_fields: Any) -> None:
    """Keep the stored values of `fields` on the instance (one query, only when one of them may change)."""
    if instance.pk is None or not _tracked(update_fields, fields):
        return
    before = sender._default_manager.filter(pk=instance.pk).values(*fields).first()
    setattr(instance, _BEFORE, before)


def _changes(instance: Any, fields: tuple[str, ...]) -> dict[str, list[Any]]:
    before = instance.__dict__.pop(_BEFORE, None)
    if before is None:
        return {}
    return {f: [before[f], getattr(instance, f)] for f in fields if before[f] != getattr(instance, f)}


# --- people: role, staff, superuser, active; tradition (special-category data); groups and permissions ----------

def _user_pre_save(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    _remember(sender, instance, USER_FIELDS, update_fields)


def _user_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if created:
        audit_record(action=Action.USER_CHANGED, subject_user=instance, target_type="user", target_id=instance.pk,
                     detail={"created": True, **{f: [None, getattr(instance, f)] for f in USER_FIELDS}})
        return
    changes = _changes(instance, USER_FIELDS)
    if changes:
        audit_record(action=Action.USER_CHANGED, subject_user=instance, target_type="user", target_id=instance.pk,
                     detail=changes)


def _profile_pre_save(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    _remember(sender, instance, ("tradition_id",), update_fields)


def _profile_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    changes = {"tradition_id": [None, instance.tradition_id]} if created and instance.tradition_id else \
        _changes(instance, ("tradition_id",))
    if changes:
        audit_record(action=Action.USER_CHANGED, subject_user=instance.user, target_type="expert profile",
                     target_id=instance.pk, detail=changes)


def _user_access_m2m(sender: Any, instance: Any, action: str, model: Any, pk_set: Any, **kwargs: Any) -> None:
    if action not in ("post_add", "post_remove", "pre_clear") or (action != "pre_clear" and not pk_set):
        return
    relation = "groups" if sender is get_user_model().groups.through else "user_permissions"
    if not isinstance(instance, get_user_model()):  # group.user_set.add(…): one row per person changed
        if action == "pre_clear":
            pk_set = set(sender._default_manager.filter(**{instance._meta.model_name: instance})
                         .values_list("user_id", flat=True))
        key = "added" if action == "post_add" else "removed"
        for user_id in sorted(pk_set):
            audit_record(action=Action.PERMISSIONS_CHANGED, subject_user_id=user_id, target_type="user",
                         target_id=user_id, detail={relation: {key: [instance.pk]}})
        return
    if action == "pre_clear":
        ids = sorted(getattr(instance, relation).values_list("pk", flat=True))
        change = {"removed": ids}
    else:
        change = {"added" if action == "post_add" else "removed": sorted(pk_set)}
    audit_record(action=Action.PERMISSIONS_CHANGED, subject_user=instance, target_type="user",
                 target_id=instance.pk, detail={relation: change})


# --- panels: who leads, which tradition, who sits on them ------------------------------------------------------

def _panel_pre_save(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    _remember(sender, instance, PANEL_FIELDS, update_fields)


def _panel_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    changes = {f: [None, getattr(instance, f)] for f in PANEL_FIELDS} if created else _changes(instance, PANEL_FIELDS)
    if changes:
        audit_record(action=Action.PANEL_CHANGED, target_type="panel", target_id=instance.pk,
                     target=f"panel #{instance.pk}", detail={"created": created, **changes})


def _panel_members(sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any) -> None:
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if reverse:  # user.panels.add(panel, …): the instance is the person, pk_set the panels
        for panel_id in sorted(pk_set or ()):
            key = "members_added" if action == "post_add" else "members_removed"
            audit_record(action=Action.PANEL_CHANGED, subject_user=instance, target_type="panel",
                         target_id=panel_id, target=f"panel #{panel_id}", detail={key: [instance.pk]})
        return
    if action == "pre_clear":
        ids = sorted(instance.members.values_list("pk", flat=True))
        key = "members_removed"
    else:
        ids = sorted(pk_set or ())
        key = "members_added" if action == "post_add" else "members_removed"
    if not ids:
        return
    subject = get_user_model()._default_manager.filter(pk=ids[0]).first() if len(ids) == 1 else None
    audit_record(action=Action.PANEL_CHANGED, subject_user=subject, target_type="panel", target_id=instance.pk,
                 target=f"panel #{instance.pk}", detail={key: ids})


# --- judge runs and evidence versions --------------------------------------------------------------------------

CANCELLED = (JudgeRun.Status.CANCELLING, JudgeRun.Status.CANCELLED)


def _run_pre_save(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    _remember(sender, instance, ("status",), update_fields)


def _run_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    detail = {"label": instance.label, "total_items": instance.total_items}
    if created:
        actor = instance.created_by if instance.created_by_id else None
        audit_record(action=Action.JUDGE_RUN_STARTED, actor=actor or _request_actor(), target_type="judge run",
                     target_id=instance.pk, target=f"judge run #{instance.pk}", detail=detail)
        return
    changes = _changes(instance, ("status",))
    if "status" in changes and changes["status"][0] not in CANCELLED and changes["status"][1] in CANCELLED:
        audit_record(action=Action.JUDGE_RUN_CANCELLED, target_type="judge run", target_id=instance.pk,
                     target=f"judge run #{instance.pk}", detail={**detail, "status": changes["status"]})


# The study judge (a rating study's LLM rater) and the pairwise judge: started is a created row. A study run's
# cancel is a queryset update (no signal): `study_judge_run_cancel` records it itself. Pairwise runs have no cancel.
OTHER_RUNS = {StudyJudgeRun: ("study judge run", "requested_by"), PairwiseRun: ("pairwise judge run", "created_by")}


def _other_run_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created:
        return
    target_type, asked_by = OTHER_RUNS[sender]
    actor = getattr(instance, asked_by) if getattr(instance, f"{asked_by}_id") else None
    audit_record(action=Action.JUDGE_RUN_STARTED, actor=actor or _request_actor(), target_type=target_type,
                 target_id=instance.pk, target=f"{target_type} #{instance.pk}",
                 detail={"kind": target_type, "status": instance.status})


def _request_actor() -> Any:
    from audit.context import current_request_info

    info = current_request_info()
    return info.user if info is not None else None


def _snapshot_post_save(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created:
        return
    action = Action.SNAPSHOT_COMPUTED if instance.status == Snapshot.Status.READY else Action.SNAPSHOT_REQUESTED
    audit_record(action=action, actor=instance.requested_by if instance.requested_by_id else _request_actor(),
                 target_type="snapshot", target_id=instance.pk, target=f"{instance.kind} {instance.subject}",
                 detail={"kind": instance.kind, "subject": instance.subject, "version": instance.version,
                         "input_hash": instance.input_hash})


def audit_hooks_connect() -> None:
    """Connect every receiver once (dispatch_uid): from OperationsConfig.ready."""
    user = get_user_model()
    pre_save.connect(_user_pre_save, sender=user, dispatch_uid="audit_user_pre")
    post_save.connect(_user_post_save, sender=user, dispatch_uid="audit_user_post")
    pre_save.connect(_profile_pre_save, sender=ExpertProfile, dispatch_uid="audit_profile_pre")
    post_save.connect(_profile_post_save, sender=ExpertProfile, dispatch_uid="audit_profile_post")
    m2m_changed.connect(_user_access_m2m, sender=user.groups.through, dispatch_uid="audit_user_groups")
    m2m_changed.connect(_user_access_m2m, sender=user.user_permissions.through, dispatch_uid="audit_user_perms")
    pre_save.connect(_panel_pre_save, sender=Panel, dispatch_uid="audit_panel_pre")
    post_save.connect(_panel_post_save, sender=Panel, dispatch_uid="audit_panel_post")
    m2m_changed.connect(_panel_members, sender=Panel.members.through, dispatch_uid="audit_panel_members")
    pre_save.connect(_run_pre_save, sender=JudgeRun, dispatch_uid="audit_run_pre")
    post_save.connect(_run_post_save, sender=JudgeRun, dispatch_uid="audit_run_post")
    post_save.connect(_snapshot_post_save, sender=Snapshot, dispatch_uid="audit_snapshot_post")
    for model in OTHER_RUNS:
        post_save.connect(_other_run_post_save, sender=model, dispatch_uid=f"audit_{model._meta.model_name}_post")
