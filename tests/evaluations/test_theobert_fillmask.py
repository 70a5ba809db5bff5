"""The fill-mask source with a tiny randomly initialised BERT built here from a config (nothing downloaded).

The 'theobert' extra (transformers, torch) is installed by `make test` into .theobert/ (pip --target, not into
.venv, so a running `make run` is not disturbed; Makefile, test-theobert): this module appends that directory to
sys.path, after .venv's packages. An extra installed into .venv itself (`make install-theobert`) works too. Without
it these tests fail rather than skip, unless THEOBERT_EXTRA=optional says the machine is meant to lack it."""
from __future__ import annotations

import itertools
import math
import os
import sys
from pathlib import Path

import pytest

THEOBERT_TEST_DIR = Path(__file__).resolve().parents[2] / ".theobert"
if THEOBERT_TEST_DIR.is_dir() and str(THEOBERT_TEST_DIR) not in sys.path:
    sys.path.append(str(THEOBERT_TEST_DIR))  # appended: packages .venv has too (numpy, …) still come from .venv
if os.environ.get("THEOBERT_EXTRA") == "optional":
    pytest.importorskip("transformers")
import torch  # noqa: E402
from django.core.management import call_command  # noqa: E402
from transformers import BertConfig, BertForMaskedLM, BertTokenizer  # noqa: E402

from evaluations.models import TheoBertCase, TheoBertResult, TheoBertRun  # noqa: E402
from evaluations.theobert.fillmask import FillMaskModel  # noqa: E402
from evaluations.theobert.scoring import CaseSpec, score_case  # noqa: E402

WORDS = ["the", "lord", "'", "s", "death", "grace", "law", "by", "god", "is", "justified", "freely", "of", "power",
         "will", "pro", "##pit", "##iation", "for", "our", "sins", "he", "cross", "church", "love", "a", "."]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizer(str(directory / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    model = BertForMaskedLM(config)
    with torch.no_grad():  # make "grace" the model's favourite word, "law" its least favourite
        model.cls.predictions.bias[vocab.index("grace")] += 8.0
        model.cls.predictions.bias[vocab.index("law")] -= 8.0
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


def test_multi_piece_expansion_beam_and_chain_probability(tiny_model):
    source = FillMaskModel(tiny_model, beam_width=64)
    assert len(source.pieces("propitiation")) == 3
    text = "he is the [MASK] for our sins ."
    # chain probability of the three pieces, computed by hand with the raw model
    ids, positions = source._encode(text, 3)
    assert len(positions) == 3
    filled, expected = list(ids), 0.0
    for position, piece in zip(positions, source.pieces("propitiation"), strict=True):
        with torch.no_grad():
            logits = source.model(input_ids=torch.tensor([filled])).logits[0, position]
        expected += float(torch.log_softmax(logits, -1)[piece])
        filled[position] = piece
    assert source.word_probability(text, "propitiation") == pytest.approx(math.exp(expected), rel=1e-5)
    # beam search with a beam wider than the vocabulary over 2 positions equals brute force
    beams = source.beam(text, 2, top=5)
    ids2, pos2 = source._encode(text, 2)
    special = set(source.tokenizer.all_special_ids)
    vocab = [i for i in range(len(source.tokenizer)) if i not in special]
    brute = []
    first = source._log_probs([ids2], [pos2[0]])[0]
    for a in vocab:
        seq = list(ids2)
        seq[pos2[0]] = a
        second = source._log_probs([seq], [pos2[1]])[0]
        for b in vocab:
            brute.append(((a, b), float(first[a] + second[b])))
    brute.sort(key=lambda item: -item[1])
    top_beams = [(tuple(s), round(v, 4)) for s, v in beams[:10]]
    assert top_beams == [(s, round(v, 4)) for s, v in brute[:10]]


def test_multi_piece_target_is_matched_as_a_word(tiny_model):
    source = FillMaskModel(tiny_model, beam_width=1000)  # wider than 27² and 27³/20: every sequence is ranked
    case = CaseSpec(case_id="MP", pass_condition="target_in_top_k", k=20000, targets=("propitiation",),
                    input="he is the [MASK] for our sins .")
    prediction = source.predict_case(case, case.input, top=20000)
    words = prediction.words()
    # three masks: every candidate is a three-piece sequence decoded as one string; the target appears as a word
    assert "propitiation" in words
    verdict = score_case(case, prediction)
    assert verdict.passed and verdict.rank == words.index("propitiation") + 1


@pytest.mark.django_db
def test_theobert_score_command_with_the_model(tiny_model, capsys):
    TheoBertCase.objects.create(case_id="CON_001", type="contrastive_theology", category="soteriology",
                                difficulty="hard", input="justified freely by god ' s [MASK] .", targets=["grace"],
                                foils=["law"], pass_condition="correct_beats_foil", k=5,
                                failure_examples=["power", "will"])
    TheoBertCase.objects.create(case_id="DOC_001", type="doctrinal_association", category="soteriology",
                                difficulty="medium", input="the lord ' s [MASK] .", targets=["law"],
                                pass_condition="target_in_top_k", k=5, failure_examples=["grace"])
    call_command("theobert_score", "--model", str(tiny_model), "--no-progress", "--resamples", "200")
    out = capsys.readouterr().out
    run = TheoBertRun.objects.get()
    assert run.source == "model" and f"TheoBERT run #{run.pk}" in out
    contrastive = TheoBertResult.objects.get(case__case_id="CON_001")
    assert contrastive.passed and contrastive.margin > 0.10 and contrastive.confidence == "high"
    assert contrastive.ranked[0][0] == "grace"
    doctrinal = TheoBertResult.objects.get(case__case_id="DOC_001")
    # "law" was pushed to the bottom and the case's failure example "grace" tops the list: generic over theological,
    # and a critical failure (a failure example in the top 3)
    assert not doctrinal.passed and doctrinal.rank is None and doctrinal.error_class == "generic_over_theological"
    assert doctrinal.critical_failure and doctrinal.critical_tokens == ["grace"]
    assert "overall" in out and "1/2" in out


def test_not_a_model_directory(tmp_path):
    from evaluations.theobert.sources import PredictionError

    with pytest.raises(PredictionError, match="no config.json"):
        FillMaskModel(tmp_path)


def test_words_are_unique_in_the_ranking(tiny_model):
    source = FillMaskModel(tiny_model)
    case = CaseSpec(case_id="U", pass_condition="target_in_top_k", k=5, targets=("grace",),
                    input="by god ' s [MASK] .")
    words = source.predict_case(case, case.input, top=25).words()
    assert len(words) == len(set(words)) == 25
    assert list(itertools.islice(words, 1)) == ["grace"]
