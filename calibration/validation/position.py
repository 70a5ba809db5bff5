"""Position bias of a judge (methodology §6.2.1) from a pairwise run: per dimension and over all, the share of
pairs whose preferred response changed when the order was swapped (Wilson interval; flagged at 10 %), and how often
the judge chose the answer shown first. Numbers from `stats.bias`; stored as a bias-check `evidence.Snapshot`."""
from __future__ import annotations

from accounts.models import User
from evaluations.judge.guardrails import evidence_enough, min_cases, thin_words
from evaluations.models import ModelResponse, PairwiseJudgment, PairwiseRun
from evidence.models import Snapshot
from stats.bias import REVERSAL_FLAG_AT, PositionBiasJson, position_bias

from .payloads import PositionPayload
from .store import CheckKind, bias_check_record

ALL = "all dimensions"
TOO_FEW_PAIRS = "too_few_pairs"  # a group's verdict below the guardrail's minimum of pairs (issue 32)


def position_analysis(*, run: PairwiseRun) -> PositionPayload:
    """Per dimension and over all: the reversal rate of the pairs judged in both orders, with the unreadable calls."""
    verdicts = dict(((first, second), preferred) for first, second, preferred in
                    PairwiseJudgment.objects.filter(run=run).exclude(preferred="")
                    .values_list("first_id", "second_id", "preferred"))
    ids = {r for pair in verdicts for r in pair}
    dimension_of = dict(ModelResponse.objects.filter(pk__in=ids).values_list("pk", "test_case__dimension"))
    pairs: dict[str, list[tuple[str, str]]] = {}
    for (first, second), preferred in verdicts.items():
        if first < second and (second, first) in verdicts:  # both orders judged
            pair = (preferred, verdicts[(second, first)])
            pairs.setdefault(dimension_of[first], []).append(pair)
            pairs.setdefault(ALL, []).append(pair)
    minimum = min_cases()
    groups = {name: position_group(pairs[name], minimum=minimum)
              for name in sorted(pairs, key=lambda k: (k == ALL, k))}
    unreadable = PairwiseJudgment.objects.filter(run=run, preferred="").count()
    n = len(pairs.get(ALL, []))
    return {"pairwise_run": run.pk, "model": run.model, "threshold": REVERSAL_FLAG_AT, "groups": groups,
            "unreadable_calls": unreadable, "n": n,
            # fails over all pairs, or where a dimension's interval is clear of 10 % (small groups vary by chance)
            "flagged": bool((ALL in groups and groups[ALL]["flagged"]) or any(g["verdict"] == "fail" for g in groups.values())),
            "min_cases": minimum, "trial": not evidence_enough(n, minimum=minimum)}


def position_group(pairs: list[tuple[str, str]], *, minimum: int) -> PositionBiasJson:
    """One group's position bias; with fewer than `minimum` pairs judged in both orders (issue 32's rule: effect
    sizes only with enough pairs) its counts stay, but its rates, intervals and verdict are withheld
    (verdict "too_few_pairs", never flagged)."""
    group = position_bias(pairs).as_dict()
    if evidence_enough(group["n_pairs"], minimum=minimum):
        return group
    return {**group, "reversal_rate": None, "reversal_ci": None, "first_position_share": None,
            "first_position_ci": None, "flagged": False, "verdict": TOO_FEW_PAIRS}


def position_thin_words(n_pairs: int) -> str:
    """What a reader sees instead of a reversal rate from too few pairs."""
    return thin_words(n_pairs, minimum=min_cases(), what="a reversal rate").replace("cases", "pairs")


def position_check(*, run: PairwiseRun, requested_by: User | None = None) -> Snapshot:
    payload = position_analysis(run=run)
    return bias_check_record(kind=CheckKind.POSITION, pairwise_run=run, flagged=payload["flagged"], n=payload["n"],
                             payload=payload, requested_by=requested_by)
