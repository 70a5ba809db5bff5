"""The artefact checks of the kinds recorded as one JSON payload (case-review reports, IRT fits, bias checks): clean
payloads pass; an interval that excludes its estimate, lies outside the figure's range or rests on too few units is
named with its JSON path; `snapshot_record` stores a contradicted payload as *failed checks* and
`manage.py check_artefact` exits 1 on it, 0 on a clean one."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from calibration.validation.artefact import bias_check_check
from casereview.checks import irt_fit_check, review_report_check
from evidence.models import Snapshot
from evidence.services import snapshot_record

REVIEW = {"cycle": 1, "agreement": [
    {"field": "valid", "label": "Valid", "level": "nominal", "units": 12, "alpha": 0.61, "interval": [0.42, 0.77],
     "note": ""},
    {"field": "clarity", "label": "Clarity", "level": "ordinal", "units": 1, "alpha": None, "interval": None,
     "note": "fewer than two reviewed cases"}]}
IRT = {"models": [{"model": "m1", "theta": 0.3, "sd": 0.2, "interval": [-0.092, 0.692]}]}
POSITION = {"groups": {"all": {"n_pairs": 40, "reversals": 6, "reversal_rate": 0.15, "reversal_ci": [0.07, 0.29],
                               "first_position_share": 0.55, "first_position_ci": [0.4, 0.69]}}}
TRADITION = {"groups": [{"scored": "a", "scoring": "b", "dimension": "all", "n_items": 3, "mean_difference": 0.4,
                         "ci": [-4.1, 4.9], "flagged": False}],
             "judge_gap": {"traditions": {"a": {"alpha": 0.7, "n_units": 30}}}}
AGREEMENT = {"groups": {"all": {"n_units": 25, "alpha": 0.72, "alpha_ci": [0.6, 0.81]}}}


def _run(check, payload) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(p) for p in check(Snapshot(payload=payload), {})]


def test_artefact_check_clean_recorded_payloads_pass() -> None:
    assert _run(review_report_check, REVIEW) == []
    assert _run(irt_fit_check, IRT) == []
    for payload in (POSITION, TRADITION, AGREEMENT):
        assert _run(bias_check_check, payload) == []


def test_artefact_check_recorded_payload_defects_are_named_by_path() -> None:
    moved = {**REVIEW, "agreement": [{**REVIEW["agreement"][0], "alpha": 0.9}]}
    assert _run(review_report_check, moved) == [
        "payload: agreement[0]/alpha: interval [0.42, 0.77] does not contain its estimate 0.9"]
    thin = {**REVIEW, "agreement": [{**REVIEW["agreement"][0], "units": 1}]}
    assert _run(review_report_check, thin) == [
        "payload: agreement[0]/alpha: an interval from 1 items (its method needs 2)"]
    share = {"groups": {"all": {**POSITION["groups"]["all"], "reversal_ci": [0.07, 1.2]}}}
    assert _run(bias_check_check, share) == [
        "payload: groups/all/reversal_rate: interval [0.07, 1.2] lies outside the figure's range [0.0, 1.0]"]
    irt = {"models": [{**IRT["models"][0], "theta": 1.5}]}
    assert _run(irt_fit_check, irt) == [
        "payload: models[0]/theta: interval [-0.092, 0.692] does not contain its estimate 1.5"]


@pytest.mark.django_db
def test_artefact_check_snapshot_record_stores_a_contradicted_payload_as_failed_checks() -> None:
    clean = snapshot_record(kind=Snapshot.Kind.BIAS_CHECK, subject="judges/run-1", payload=AGREEMENT,
                            requested_by=None)
    assert clean.status == Snapshot.Status.READY and clean.checks == []
    bad = {"groups": {"all": {"n_units": 25, "alpha": 0.95, "alpha_ci": [0.6, 0.81]}}}
    failed = snapshot_record(kind=Snapshot.Kind.BIAS_CHECK, subject="judges/run-1", payload=bad, requested_by=None)
    assert failed.status == Snapshot.Status.FAILED_CHECKS
    assert failed.checks == ["payload: groups/all/alpha: interval [0.6, 0.81] does not contain its estimate 0.95"]
    out = io.StringIO()
    call_command("check_artefact", str(clean.pk), stdout=out)
    assert "clean" in out.getvalue()
    with pytest.raises(SystemExit) as exit_info:
        call_command("check_artefact", "--all", stdout=(out := io.StringIO()))
    assert exit_info.value.code == 1 and "groups/all/alpha: interval [0.6, 0.81]" in out.getvalue()
