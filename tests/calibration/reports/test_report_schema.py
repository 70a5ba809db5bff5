"""The typed report tree: every built report fits it exactly, and the OpenAPI schema lists every field."""
from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from calibration.cycles.ratings import Rating, UnitInfo
from calibration.reports import schema
from calibration.reports.build import calibration_report_build
from calibration.reports.schema import Report, report_from_dict, report_to_dict
from evidence.kit.trees import ReportShapeError


def synthetic(n_items: int, n_raters: int, *, judge: bool = True, gold: bool = True, seed: int = 1):
    rng = np.random.default_rng(seed)
    units = [UnitInfo(str(i), f"s{k}", ["textual", "doctrinal"][i % 2], ["catholic", "none"][i % 3 == 0],
                      ["easy", "hard"][i % 2]) for i in range(n_items) for k in range(2)]
    ratings = [Rating(u, f"R{r:02d}", int(np.clip(int(u.item) % 4 + rng.integers(-1, 2), 0, 3)))
               for u in units for r in range(n_raters) if rng.random() > 0.15]
    judged = {u.key: int(rng.integers(0, 4)) for u in units} if judge else {}
    golds = {u.key: int(rng.integers(0, 4)) for u in units[: len(units) // 3]} if gold else {}
    return ratings, units, judged, golds


@pytest.mark.parametrize(("n_items", "n_raters", "judge", "gold", "resamples"), [
    (12, 3, True, True, 50),
    (12, 3, False, False, 0),     # no judge, no gold, no intervals
    (3, 1, True, False, 20),      # one rater: nothing pairable
    (30, 6, True, True, 100),
    (4, 0, True, False, 10),      # nobody has scored yet
    (10, 2, True, True, 30),      # two experts: Cohen's κ of the pair is reported too
])
def test_every_built_report_fits_the_tree_and_round_trips(n_items, n_raters, judge, gold, resamples) -> None:
    ratings, units, judged, golds = synthetic(n_items, n_raters, judge=judge, gold=gold)
    tree = calibration_report_build(ratings, judge=judged, gold=golds, units=units, n_resamples=resamples, seed=3)
    built = tree.to_json()
    typed = report_from_dict(built)
    assert isinstance(typed, Report) and typed.groups[0].kind == "overall"
    assert report_to_dict(typed) == built
    assert typed == tree and Report.from_json(built) == tree  # the stored JSON reads back into the same tree
    if n_raters == 2:  # the optional pair block is present, typed and given back
        assert any("cohen_kappa" in g["experts"] for g in built["groups"])


def test_a_report_that_drifts_from_the_tree_is_refused_with_the_path_of_the_bad_key() -> None:
    ratings, units, judged, golds = synthetic(8, 3)
    built = calibration_report_build(ratings, judge=judged, gold=golds, units=units, n_resamples=0, seed=3).to_json()
    built["groups"][1]["experts"]["new_coefficient"] = 0.5
    with pytest.raises(ReportShapeError, match=r"report\.groups\[1\]\.experts: unknown key\(s\) new_coefficient"):
        report_from_dict(built)
    del built["groups"][1]["experts"]["new_coefficient"]
    del built["groups"][0]["judge_vs_gold"]["confusion"]
    with pytest.raises(ReportShapeError, match=r"report\.groups\[0\]\.judge_vs_gold\.confusion: missing"):
        report_from_dict(built)
    built["groups"][0]["judge_vs_gold"]["confusion"] = None
    built["n_experts"] = "three"
    with pytest.raises(ReportShapeError, match=r"report\.n_experts: expected int"):
        report_from_dict(built)


def _all_dataclasses(cls: type, seen: set[type]) -> set[type]:
    if cls in seen:
        return seen
    seen.add(cls)
    for hint in typing.get_type_hints(cls).values():
        for inner in (hint, *typing.get_args(hint), *[a for h in typing.get_args(hint) for a in typing.get_args(h)]):
            if dataclasses.is_dataclass(inner):
                _all_dataclasses(inner, seen)  # type: ignore[arg-type]
    return seen


def test_the_openapi_schema_lists_every_field_of_the_report() -> None:
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator().get_schema(request=None, public=True)
    components = document["components"]["schemas"]
    listed = {name: set(body.get("properties", {})) for name, body in components.items()}
    all_properties = set().union(*listed.values())
    for cls in _all_dataclasses(Report, set()):
        names = {f.name for f in dataclasses.fields(cls)}
        assert names <= all_properties, (cls.__name__, names - all_properties)
    assert {"groups", "meta", "n_experts"} <= listed["Report"]
    path = document["paths"]["/api/v1/reports/cycles/{id}/"]["get"]
    assert path["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/CycleSnapshot")
    assert "report" in listed["CycleSnapshot"] and schema.Experts.__name__ in components
