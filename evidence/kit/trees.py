"""An artefact's tree ⇄ JSON: every kind is built as a tree of dataclasses, and JSON exists only at the edges.

`tree_to_json` gives the JSON-ready value a snapshot stores (keys in field order, optional keys left out when
unset); `tree_from_json` reads a stored one back strictly — an unknown or missing key is an error naming it — so a
stored payload, its JSON export and the API schema cannot drift apart. The cycle report, the study report and the
calibrated leaderboard use them.
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import field
from typing import Any, TypeVar, Union

T = TypeVar("T")
# A JSON object at an edge of the tree: what a snapshot stores, a file holds or the API sends.
JsonObject = dict[str, Any]


def optional(default: Any = None) -> Any:
    """A key that a report carries only in some cases (left out of the dict when unset)."""
    return field(default=default, metadata={"optional": True})


class ReportShapeError(ValueError):
    """A built report does not have the documented shape (a key missing, unknown or of the wrong kind)."""


def _convert(kind: Any, value: Any, path: str) -> Any:
    if kind is Any:  # a free-form JSON value (a stats summary's entries): taken as it is
        return value
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [k for k in typing.get_args(kind) if k is not type(None)]
        if value is None:
            if len(options) == len(typing.get_args(kind)):
                raise ReportShapeError(f"{path}: must not be null")
            return None
        return _convert(options[0], value, path)
    if origin is list:
        if not isinstance(value, list):
            raise ReportShapeError(f"{path}: expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(kind)
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
        _, item = typing.get_args(kind)
        return {k: _convert(item, v, f"{path}.{k}") for k, v in value.items()}
    if typing.is_typeddict(kind):  # a stats summary (stats.shapes): a JSON object, its keys typed for mypy only
        if not isinstance(value, dict):
            raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
        return dict(value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if isinstance(value, kind):  # a subtree the builder made typed already
            return value
        return _dataclass(kind, value, path)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ReportShapeError(f"{path}: expected a number, got {type(value).__name__}")
        return value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReportShapeError(f"{path}: expected {kind.__name__}, got {type(value).__name__}")
    return value


@functools.cache
def _shape(cls: type) -> tuple[dict[str, object], dict[str, dataclasses.Field]]:
    """A dataclass's resolved field types and fields, once per class (a report has ~10,000 instances)."""
    return typing.get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def _dataclass(cls: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise ReportShapeError(f"{path}: expected an object, got {type(value).__name__}")
    hints, fields = _shape(cls)
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ReportShapeError(f"{path}: unknown key(s) {', '.join(unknown)}")
    kwargs = {}
    for name, spec in fields.items():
        if name not in value:
            if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise ReportShapeError(f"{path}.{name}: missing")
            continue
        kwargs[name] = _convert(hints[name], value[name], f"{path}.{name}")
    return cls(**kwargs)


def tree_from_json(cls: type[T], payload: Any, path: str = "report") -> T:
    """The dataclass tree `cls` of a JSON value, checked strictly; raises ReportShapeError naming the bad key."""
    return _dataclass(cls, payload, path)


def tree_to_json(value: Any, *, sort_maps: bool = True) -> Any:
    """The JSON-ready value of a dataclass tree: keys in field order, optional keys left out when unset; free-form
    maps sorted by key (`sort_maps`, the cycle report's rule) or kept in their order."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: tree_to_json(getattr(value, f.name), sort_maps=sort_maps) for f in dataclasses.fields(value)
                if not (f.metadata.get("optional") and getattr(value, f.name) is None)}
    if isinstance(value, list | tuple):
        return [tree_to_json(v, sort_maps=sort_maps) for v in value]
    if isinstance(value, dict):  # free-form maps (software versions): sorted, so a stored payload renders alike
        return {k: tree_to_json(value[k], sort_maps=sort_maps) for k in (sorted(value) if sort_maps else value)}
    return value
