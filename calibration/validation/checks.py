"""Running a check of the validation programme from its page: which inputs each kind needs (the rules, checked
before anything is queued) and the one entry point the worker calls (`validation_check_run`)."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from accounts.models import User
from annotations.models import CalibrationCycle
from evaluations.models import JudgeRun
from evidence.models import Snapshot

from .agreement import agreement_check
from .store import CheckKind
from .tradition import tradition_check
from .verbosity import verbosity_check

# The kinds a page may queue with judge runs or a cycle; position checks come with their pairwise run.
RUNNABLE = (CheckKind.VERBOSITY, CheckKind.TRADITION, CheckKind.JUDGES, CheckKind.RUNS)


@dataclass(frozen=True)
class CheckRequest:
    kind: str
    run_ids: tuple[int, ...] = ()
    cycle_id: int | None = None


def validation_check_validate(*, kind: str, runs: list[JudgeRun], cycle: CalibrationCycle | None) -> CheckRequest:
    """The rules of each check's inputs (the same as `manage.py judge_bias`); raises ValidationError naming the
    field. Returns what the worker needs."""
    if kind not in RUNNABLE:
        raise ValidationError(f"{kind!r} is not a check that runs from judge runs or a cycle", code="bad_kind")
    if any(run.status != JudgeRun.Status.FINISHED or not run.scored_items for run in runs):
        raise ValidationError({"runs": "choose finished runs that scored something"})
    if kind == CheckKind.VERBOSITY:
        if len(runs) != 1:
            raise ValidationError({"run": "choose one finished judge run"})
    elif kind == CheckKind.TRADITION:
        if cycle is None or cycle.kind != CalibrationCycle.Kind.CROSS_TRADITION:
            raise ValidationError({"cycle": "choose a cross-tradition cycle (manage.py cross_tradition_cycle makes one)"})
    else:
        if len({run.pk for run in runs}) < 2:
            raise ValidationError({"runs": "choose two or more different finished runs"})
        models = {run.primary_model for run in runs}
        if kind == CheckKind.RUNS and len(models) > 1:
            raise ValidationError({"runs": f"run-to-run compares runs of one judge; these have "
                                           f"{', '.join(sorted(models))}"})
        if kind == CheckKind.JUDGES and len(models) < 2:
            raise ValidationError({"runs": "a judge comparison needs runs of different judge models"})
    return CheckRequest(kind=kind, run_ids=tuple(run.pk for run in runs), cycle_id=cycle.pk if cycle else None)


def validation_check_run(*, request: CheckRequest, requested_by: User | None = None) -> Snapshot:
    """Compute and store one check (the worker calls this; `manage.py judge_bias` computes the same)."""
    found = {run.pk: run for run in JudgeRun.objects.filter(pk__in=request.run_ids).select_related("rubric")}
    runs = [found[pk] for pk in request.run_ids]
    cycle = CalibrationCycle.objects.get(pk=request.cycle_id) if request.cycle_id else None
    if request.kind == CheckKind.VERBOSITY:
        return verbosity_check(run=runs[0], cycle=cycle, requested_by=requested_by)
    if request.kind == CheckKind.TRADITION:
        assert cycle is not None
        return tradition_check(cycle=cycle, requested_by=requested_by)
    return agreement_check(runs=runs, kind=request.kind, requested_by=requested_by)
