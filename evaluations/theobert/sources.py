"""Where TheoBERT predictions come from. Every source yields one `Prediction` per case it is given.

1. `PredictionsFile`: a JSON file, either our format —

       {"model": "theo-bert-base", "predictions": [
          {"id": "DOC_001", "top": [{"token": "cross", "prob": 0.61}, ...],
           "probabilities": {"grace": 0.41, "law": 0.12}}]}

   — or a results file of the suite's own script (`eval_results/*.json`): any object with a list under
   "results", "cases" or "per_case" (or a bare list) whose entries name the case ("id" or "case_id") and give the
   ranked candidates under "top", "top_k", "predictions", "top_predictions" or "predicted" (strings, or objects with
   "token"/"word"/"token_str" and "prob"/"probability"/"score") and, for contrastive cases, "probabilities" or
   "target_prob"/"p_target" and "foil_prob"/"p_foil". Every problem names the entry and field.
2. `FillMaskModel` (evaluations/theobert/fillmask.py): a local Hugging Face masked-LM directory, run on the CPU.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from evaluations.theobert.scoring import CaseSpec, Prediction

LIST_KEYS = ("predictions", "results", "cases", "per_case")
RANKED_KEYS = ("top", "top_k", "predictions", "top_predictions", "predicted")
TOKEN_KEYS = ("token", "word", "token_str", "text")
PROB_KEYS = ("prob", "probability", "score", "p")


class PredictionError(ValueError):
    """A predictions file or model output that cannot be scored; the message names where."""


class PredictionSource(Protocol):
    label: str

    def predict(self, cases: Sequence[CaseSpec], *, top: int, progress: Any = None) -> Iterator[Prediction]:
        ...


class PredictionsFile:
    """Predictions read from a JSON file (see the module docstring for the accepted shapes)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise PredictionError(f"{self.path}: no such file") from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PredictionError(f"{self.path}: not a JSON file ({exc})") from exc
        entries, model = self._entries(document)
        self.label = model or self.path.stem
        self.by_case: dict[str, Prediction] = {}
        for index, entry in enumerate(entries):
            where = f"{self.path}: entry {index + 1}"
            prediction = parse_entry(entry, where)
            if prediction.case_id in self.by_case:
                raise PredictionError(f"{where}: case {prediction.case_id!r} appears twice")
            self.by_case[prediction.case_id] = prediction

    def _entries(self, document: Any) -> tuple[list[Any], str]:
        if isinstance(document, list):
            return document, ""
        if not isinstance(document, Mapping):
            raise PredictionError(f"{self.path}: expected an object or a list at the top level")
        model = str(document.get("model") or document.get("model_name") or "")
        for key in LIST_KEYS:
            value = document.get(key)
            if isinstance(value, list):
                return value, model
            if isinstance(value, Mapping):  # {"DOC_001": {...}, ...}
                return [{"id": case_id, **entry} for case_id, entry in value.items() if isinstance(entry, Mapping)], model
        raise PredictionError(f"{self.path}: no list of predictions under any of {', '.join(LIST_KEYS)}")

    def predict(self, cases: Sequence[CaseSpec], *, top: int, progress: Any = None) -> Iterator[Prediction]:
        missing = [case.case_id for case in cases if case.case_id not in self.by_case]
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise PredictionError(f"{self.path}: no prediction for case(s) {shown}")
        for case in cases:
            if progress is not None:
                progress.update(1)
            yield self.by_case[case.case_id]


def parse_entry(entry: Any, where: str) -> Prediction:
    if not isinstance(entry, Mapping):
        raise PredictionError(f"{where}: expected an object")
    case_id = entry.get("id", entry.get("case_id"))
    if not isinstance(case_id, str) or not case_id:
        raise PredictionError(f"{where}: field 'id' is missing")
    where = f"{where} ({case_id})"
    ranked_raw = next((entry[key] for key in RANKED_KEYS if key in entry), None)
    if not isinstance(ranked_raw, list):
        raise PredictionError(f"{where}: no ranked candidates (a list under one of {', '.join(RANKED_KEYS)})")
    ranked = tuple(_candidate(item, f"{where}, candidate {position}") for position, item in enumerate(ranked_raw, 1))
    probabilities: dict[str, float] = {}
    raw = entry.get("probabilities")
    if raw is not None:
        if not isinstance(raw, Mapping):
            raise PredictionError(f"{where}: field 'probabilities' must map tokens to numbers")
        for token, value in raw.items():
            probabilities[str(token)] = _probability(value, f"{where}, probabilities[{token!r}]")
    for key in ("target", "foil"):
        value = entry.get(f"{key}_prob", entry.get(f"p_{key}"))
        token = entry.get(key) or entry.get(f"{key}_token")
        if value is not None and isinstance(token, str):
            probabilities[token] = _probability(value, f"{where}, {key}_prob")
    return Prediction(case_id=case_id, ranked=ranked, probabilities=probabilities)


def _candidate(item: Any, where: str) -> tuple[str, float]:
    if isinstance(item, str):
        return item, float("nan")
    if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str):
        return item[0], _probability(item[1], where)
    if isinstance(item, Mapping):
        token = next((item[key] for key in TOKEN_KEYS if key in item), None)
        if not isinstance(token, str):
            raise PredictionError(f"{where}: no token (one of {', '.join(TOKEN_KEYS)})")
        value = next((item[key] for key in PROB_KEYS if key in item), None)
        return token, float("nan") if value is None else _probability(value, where)
    raise PredictionError(f"{where}: expected a token, [token, probability] or an object")


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise PredictionError(f"{where}: probability must be a number from 0 to 1, not {value!r}")
    return float(value)


def scored_tokens(case: CaseSpec) -> list[str]:
    """The words whose probability a model source must report for a case (targets, alternatives, foils)."""
    seen: list[str] = []
    for token in (*case.targets, *case.acceptable_alternatives, *case.foils):
        if token not in seen:
            seen.append(token)
    return seen

