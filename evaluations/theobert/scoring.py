"""The TheoBERT automatic scorer, as `theobert-eval.md` ("Scoring Protocol", "Error Classification",
"Critical Failures") specifies it. Pure Python: a case and a model's prediction in, a verdict out.

A *prediction* for one case is the model's ranked candidates for the masked position(s), each a whole word (a
multi-piece target is decoded back into its word by the source that produced it) with its probability, plus the
probabilities the model gives to the case's named targets and foils (needed by `correct_beats_foil`).

Conventions where the seed is silent, stated once here and in docs/theobert.md:
- Tokens are compared case-insensitively after trimming whitespace (TheoBERT is an uncased model).
- The correct set is `targets` ∪ `acceptable_alternatives`.
- MRR is 1 / rank of the first correct candidate when that rank is ≤ k, else 0 (MRR@k).
- Error classes are tried in this order, first match wins, failed cases only:
  `near_miss` (first correct candidate at rank k+1 or k+2); `generic_over_theological` (the top candidate,
  or most of the top k, are generic words: `GENERIC_WORDS` or the case's own `failure_examples`);
  `total_miss` (no correct candidate in the first 20, or none ranked at all); otherwise
  `wrong_semantic_cluster` (the model ranks the answer, between k+3 and 20, below theologically wrong words).
  For `correct_beats_foil` cases the rank used is the target's rank among the candidates.
- A critical failure: any `failure_examples` token among the top 3 candidates, pass or fail.
- Confidence of `correct_beats_foil`: high if margin > 0.10, medium if > 0.02, low otherwise.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

NEAR_MISS_SPAN = 2
TOTAL_MISS_RANK = 20
CRITICAL_TOP = 3
HIGH_MARGIN = 0.10
MEDIUM_MARGIN = 0.02
TARGET_SET_SHARE = 0.8

# Generic/universal words the seed names ("power", "love", "will", "plan") and their kind: words that fit almost
# any religious sentence and so carry no theological discrimination.
GENERIC_WORDS = frozenset({
    "power", "love", "will", "plan", "god", "lord", "life", "world", "people", "man", "men", "things", "thing",
    "way", "word", "truth", "faith", "heart", "name", "spirit", "glory", "good", "one", "all", "us", "him", "it",
})


def norm(token: str) -> str:
    return " ".join(token.strip().lower().split())


@dataclass(frozen=True)
class Prediction:
    """What a model predicted for one case: ranked candidates (word, probability), best first, and the probability
    of each named target/foil it was asked about (empty when the source only ranks)."""

    case_id: str
    ranked: tuple[tuple[str, float], ...]
    probabilities: Mapping[str, float] = field(default_factory=dict)

    def words(self) -> list[str]:
        return [norm(word) for word, _ in self.ranked]

    def probability(self, token: str) -> float | None:
        wanted = norm(token)
        for key, value in self.probabilities.items():
            if norm(key) == wanted:
                return float(value)
        for word, value in self.ranked:
            if norm(word) == wanted:
                return float(value)
        return None


@dataclass(frozen=True)
class CaseSpec:
    """The fields of an eval.json case the scorer reads."""

    case_id: str
    pass_condition: str
    k: int
    targets: tuple[str, ...]
    foils: tuple[str, ...] = ()
    acceptable_alternatives: tuple[str, ...] = ()
    failure_examples: tuple[str, ...] = ()
    input: str = ""

    @classmethod
    def of(cls, case: object) -> CaseSpec:
        """From a model instance or any object/dict with the eval.json field names."""
        def get(name: str, default: object = ()) -> object:
            if isinstance(case, Mapping):
                return case.get(name, default)
            return getattr(case, name, default)

        case_id = get("case_id", None) or get("id", "")
        return cls(
            case_id=str(case_id), pass_condition=str(get("pass_condition")), k=int(get("k", 5) or 5),  # type: ignore[call-overload]
            targets=tuple(get("targets") or ()),  # type: ignore[arg-type]
            foils=tuple(get("foils") or ()),  # type: ignore[arg-type]
            acceptable_alternatives=tuple(get("acceptable_alternatives") or ()),  # type: ignore[arg-type]
            failure_examples=tuple(get("failure_examples") or ()),  # type: ignore[arg-type]
            input=str(get("input", "") or ""),
        )

    def correct(self) -> set[str]:
        return {norm(t) for t in (*self.targets, *self.acceptable_alternatives)}


@dataclass(frozen=True)
class Verdict:
    case_id: str
    passed: bool
    rank: int | None  # rank of the first correct candidate (1-based), None if absent
    mrr: float | None  # target_in_top_k only
    margin: float | None  # correct_beats_foil only: P(target) − P(foil)
    confidence: str  # high / medium / low for correct_beats_foil, else ""
    share_in_set: float | None  # all_top_k_in_target_set only
    error_class: str  # "" when passed
    critical_failure: bool
    critical_tokens: tuple[str, ...]
    top: tuple[str, ...]  # the top k candidates as compared


def first_rank(words: Sequence[str], wanted: Iterable[str]) -> int | None:
    wanted = set(wanted)
    for position, word in enumerate(words, start=1):
        if word in wanted:
            return position
    return None


def confidence_band(margin: float) -> str:
    margin = round(margin, 12)  # 0.50 − 0.48 is 0.0200000000000000018 in binary; the band is meant in decimals
    if margin > HIGH_MARGIN:
        return "high"
    if margin > MEDIUM_MARGIN:
        return "medium"
    return "low"


def error_class(case: CaseSpec, words: Sequence[str], rank: int | None) -> str:
    k = case.k
    if rank is not None and k < rank <= k + NEAR_MISS_SPAN:
        return "near_miss"
    generic = GENERIC_WORDS | {norm(t) for t in case.failure_examples}
    top = list(words[:k])
    if top and (top[0] in generic or sum(word in generic for word in top) * 2 > len(top)):
        return "generic_over_theological"
    if rank is None or rank > TOTAL_MISS_RANK:
        return "total_miss"
    return "wrong_semantic_cluster"


def score_case(case: CaseSpec, prediction: Prediction) -> Verdict:
    """The verdict of one case. Raises ValueError when the prediction lacks what the pass condition needs."""
    words = prediction.words()
    k = case.k
    correct = case.correct()
    rank = first_rank(words, correct)
    failure = {norm(t) for t in case.failure_examples}
    critical = tuple(word for word in words[:CRITICAL_TOP] if word in failure)
    mrr: float | None = None
    margin: float | None = None
    confidence = ""
    share: float | None = None
    if case.pass_condition == "target_in_top_k":
        passed = rank is not None and rank <= k
        mrr = 1.0 / rank if passed and rank else 0.0
    elif case.pass_condition == "correct_beats_foil":
        if not case.foils:
            raise ValueError(f"case {case.case_id}: correct_beats_foil needs a foil")
        target_p = _best_probability(prediction, (*case.targets, *case.acceptable_alternatives))
        foil_p = _best_probability(prediction, case.foils)
        if target_p is None or foil_p is None:
            missing = "target" if target_p is None else "foil"
            raise ValueError(f"case {case.case_id}: the prediction gives no probability for its {missing}")
        margin = target_p - foil_p
        passed = target_p > foil_p
        confidence = confidence_band(margin)
        rank = first_rank(words, {norm(t) for t in case.targets}) or rank
    elif case.pass_condition == "all_top_k_in_target_set":
        top = words[:k]
        share = sum(word in correct for word in top) / k
        passed = share >= TARGET_SET_SHARE
    else:
        raise ValueError(f"case {case.case_id}: unknown pass_condition {case.pass_condition!r}")
    return Verdict(
        case_id=case.case_id, passed=passed, rank=rank, mrr=mrr, margin=margin, confidence=confidence,
        share_in_set=share, error_class="" if passed else error_class(case, words, rank),
        critical_failure=bool(critical), critical_tokens=critical, top=tuple(words[:k]),
    )


def _best_probability(prediction: Prediction, tokens: Iterable[str]) -> float | None:
    values = [p for p in (prediction.probability(t) for t in tokens) if p is not None]
    return max(values) if values else None
