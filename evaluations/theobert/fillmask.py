"""Predictions from a local Hugging Face masked-language model directory, on the CPU (`pip install .[theobert]`).

Multi-piece handling as `theobert-eval.md` describes it:
1. `[MASK]` is expanded into as many mask tokens as the case's longest target needs (at least one);
2. a beam search over the mask positions, left to right, each step conditioning on the pieces already chosen, yields
   ranked piece sequences; each is decoded into a word ("##" continuations joined);
3. a target matches a sequence when its pieces equal the sequence or are contained in it as a contiguous
   subsequence (a target that needs fewer positions than the masks available).
The probability of a word (targets, alternatives, foils) is the chain product of its pieces' probabilities,
each predicted with the earlier pieces filled in and the later ones masked, with `[MASK]` expanded to the word's
own length.

`transformers` and `torch` are imported when a model is opened, so the rest of the app never needs them.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from evaluations.domain import MASK_TOKEN
from evaluations.theobert.scoring import CaseSpec, Prediction, norm
from evaluations.theobert.sources import PredictionError, scored_tokens

BEAM_WIDTH = 10


class FillMaskModel:
    """A masked LM loaded from a directory (config, weights, tokenizer files); nothing is downloaded."""

    def __init__(self, directory: str | Path, *, beam_width: int = BEAM_WIDTH):
        try:
            import torch
            from transformers import AutoModelForMaskedLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise PredictionError(
                "the model source needs the optional TheoBERT extra: pip install -e '.[theobert]' (transformers, torch)"
            ) from exc
        path = Path(directory)
        if not (path / "config.json").is_file():
            raise PredictionError(f"{path}: not a model directory (no config.json)")
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = AutoModelForMaskedLM.from_pretrained(str(path), local_files_only=True)
        self.model.eval()
        self.label = path.name
        self.beam_width = beam_width
        self.special = set(self.tokenizer.all_special_ids)  # never a prediction ([CLS], [MASK], [PAD], …)
        if self.tokenizer.mask_token is None:
            raise PredictionError(f"{path}: the tokenizer has no mask token")

    # -- pieces ---------------------------------------------------------------------------------------------
    def pieces(self, word: str) -> list[int]:
        ids: list[int] = self.tokenizer(word, add_special_tokens=False)["input_ids"]
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        text = str(self.tokenizer.decode(list(ids)))
        return norm(text.replace(" ##", "").replace("##", ""))

    def _encode(self, text: str, masks: int) -> tuple[list[int], list[int]]:
        """Token ids of the sentence with its [MASK] expanded to `masks` mask tokens, and the mask positions."""
        if MASK_TOKEN not in text:
            raise PredictionError(f"input has no {MASK_TOKEN}: {text[:60]!r}")
        before, _, after = text.partition(MASK_TOKEN)
        mask = self.tokenizer.mask_token
        expanded = before + " ".join([mask] * masks) + after
        ids: list[int] = self.tokenizer(expanded, truncation=True)["input_ids"]
        positions = [i for i, token in enumerate(ids) if token == self.tokenizer.mask_token_id]
        if len(positions) != masks:
            raise PredictionError(f"expanding the mask into {masks} pieces gave {len(positions)} mask tokens")
        return ids, positions

    def _log_probs(self, batch: list[list[int]], positions: list[int]) -> Any:
        """Log-softmax at one position for each sequence in the batch: (batch, vocabulary)."""
        torch = self.torch
        width = max(len(ids) for ids in batch)
        pad = self.tokenizer.pad_token_id or 0
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids in batch])
        attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in batch])
        with torch.no_grad():
            logits = self.model(input_ids=input_ids, attention_mask=attention).logits
        rows = torch.arange(len(batch))
        return torch.log_softmax(logits[rows, torch.tensor(positions)], dim=-1)

    # -- beam search and word probabilities -----------------------------------------------------------------
    def beam(self, text: str, masks: int, top: int) -> list[tuple[list[int], float]]:
        """Piece sequences for `masks` positions, best first, with their chain log-probabilities."""
        ids, positions = self._encode(text, masks)
        beams: list[tuple[list[int], float]] = [([], 0.0)]
        width = max(self.beam_width, top)
        for step, position in enumerate(positions):
            batch = []
            for chosen, _ in beams:
                filled = list(ids)
                for offset, token in enumerate(chosen):
                    filled[positions[offset]] = token
                batch.append(filled)
            log_probs = self._log_probs(batch, [position] * len(batch))
            candidates: list[tuple[list[int], float]] = []
            values, indices = log_probs.topk(min(width + len(self.special), log_probs.shape[-1]), dim=-1)
            for row, (chosen, score) in enumerate(beams):
                for value, index in zip(values[row].tolist(), indices[row].tolist(), strict=True):
                    if index in self.special:
                        continue
                    candidates.append((chosen + [index], score + value))
            candidates.sort(key=lambda item: -item[1])
            beams = candidates[:width] if step < masks - 1 else candidates
        return beams

    def word_probability(self, text: str, word: str) -> float:
        """P(word) as the chain product of its pieces, with [MASK] expanded to the word's length."""
        pieces = self.pieces(word)
        if not pieces:
            return 0.0
        ids, positions = self._encode(text, len(pieces))
        total = 0.0
        filled = list(ids)
        for position, piece in zip(positions, pieces, strict=True):
            total += float(self._log_probs([filled], [position])[0, piece])
            filled[position] = piece
        return math.exp(total)

    def predict_case(self, case: CaseSpec, text: str, *, top: int) -> Prediction:
        target_pieces = {norm(t): self.pieces(t) for t in (*case.targets, *case.acceptable_alternatives)}
        masks = max([len(p) for p in target_pieces.values()] or [1]) or 1
        ranked: list[tuple[str, float]] = []
        seen: set[str] = set()
        for sequence, log_p in self.beam(text, masks, top):
            word = self.decode(sequence)
            # a target spanning fewer positions than the masks matches by contiguous subsequence: rank it as the target
            for target, pieces in target_pieces.items():
                if pieces and _contains(sequence, pieces):
                    word = target
                    break
            if word and word not in seen:
                seen.add(word)
                ranked.append((word, math.exp(log_p)))
            if len(ranked) >= top:
                break
        probabilities = {token: self.word_probability(text, token) for token in scored_tokens(case)}
        return Prediction(case_id=case.case_id, ranked=tuple(ranked), probabilities=probabilities)

    def predict(self, cases: Sequence[CaseSpec], *, top: int, progress: Any = None) -> Iterator[Prediction]:
        for case in cases:
            if MASK_TOKEN not in case.input:
                raise PredictionError(f"case {case.case_id}: input has no {MASK_TOKEN}")
            yield self.predict_case(case, case.input, top=top)
            if progress is not None:
                progress.update(1)


def _contains(sequence: Sequence[int], pieces: Sequence[int]) -> bool:
    n = len(pieces)
    return any(list(sequence[i:i + n]) == list(pieces) for i in range(len(sequence) - n + 1))
