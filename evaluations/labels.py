"""Names for people, in one place: rubric dimension and sub-dimension keys, tradition keys, report groups.

Data, exports and URLs keep the methodology's keys (`doctrinal`, `interpretiveMethod`, `catholic`, "none" for
a tradition-neutral case); every page shows the names below, through these functions or the template filters
of `evaluations/templatetags/labels.py` (`{{ key|rubric_label }}`, `{{ key|tradition_label }}`). The names come
from the rubric (methodology RUBRIC_V1; later rubric versions keep the keys) and the methodology's traditions;
a key neither knows is spelt out ("newSubDimension" → "New sub dimension") rather than shown raw.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from .domain import language_name
from .methodology import RUBRIC_V1, TRADITIONS

NEUTRAL = "Tradition-neutral"  # the one name of "no tradition" on every page
NO_TRADITION_KEYS = frozenset({"", "none", "neutral", "tradition-neutral"})

DIMENSION_NAMES: dict[str, str] = {d.key: d.name for d in RUBRIC_V1}
SUB_DIMENSION_NAMES: dict[str, str] = {s.key: s.name for d in RUBRIC_V1 for s in d.sub_dimensions}
TRADITION_NAMES: dict[str, str] = {t.key: t.name for t in TRADITIONS}
GROUP_KIND_NAMES = {"overall": "Overall", "dimension": "Dimension", "sub_dimension": "Sub-dimension",
                    "tradition": "Tradition", "difficulty": "Difficulty", "language": "Language"}


def spelt_out(key: str) -> str:
    """A key as words: "doctrinalAccuracy" → "Doctrinal accuracy", "sub_dimension" → "Sub dimension"."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[_.-]+", " ", key).split()
    return " ".join(words).capitalize() if words else key


def rubric_label(key: str | None) -> str:
    """The rubric's name of a dimension or sub-dimension key ("interpretiveMethod" → "Interpretive Method")."""
    if not key:
        return ""
    return DIMENSION_NAMES.get(key) or SUB_DIMENSION_NAMES.get(key) or spelt_out(key)


def tradition_label(key: str | None) -> str:
    """A tradition's name from its key or name; no tradition ("", None, "none") is "Tradition-neutral"."""
    if key is None or str(key).strip().lower() in NO_TRADITION_KEYS:
        return NEUTRAL
    key = str(key)
    if key in TRADITION_NAMES:
        return TRADITION_NAMES[key]
    return key if key in TRADITION_NAMES.values() else spelt_out(key).title()


def key_labels(*, rubric_keys: Iterable[str] = (), tradition_keys: Iterable[str] = ()) -> dict[str, str]:
    """Rubric (dimension, sub-dimension) and tradition keys whose label differs from the key, mapped to it: what a
    reader must never see where the label exists (the artefact checker searches for them). No tradition and
    "neutral" have no key to hide."""
    labels = {key: rubric_label(key) for key in rubric_keys}
    labels.update({key: tradition_label(key) for key in tradition_keys
                   if key.strip().lower() not in ("", "none", "neutral")})
    return {key: label for key, label in labels.items() if key != label}


def language_label(tag: str | None) -> str:
    """A case language for people: "Spanish (es)", "Korean (ko)"; no tag is English (issue 35)."""
    tag = str(tag or "en")
    name = language_name(tag)
    return tag if name == tag else f"{name} ({tag})"


def group_label(kind: str, value: str) -> str:
    """A report group for people: "Overall", "Dimension: Doctrinal Precision", "Tradition: Tradition-neutral"."""
    if kind == "overall":
        return "Overall"
    if kind in ("dimension", "sub_dimension"):
        name = rubric_label(value)
    elif kind == "tradition":
        name = tradition_label(value)
    elif kind == "language":
        name = language_label(value)
    else:
        name = spelt_out(value)
    return f"{GROUP_KIND_NAMES.get(kind, spelt_out(kind))}: {name}"
