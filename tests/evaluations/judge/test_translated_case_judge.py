"""The judge and translated cases (issue 35): an English case's prompt is §5.3.4's byte for byte, a Spanish case's
names its language, and the run records the languages of its cases."""
from __future__ import annotations

from evaluations.judge.pipeline import work_items
from evaluations.judge.prompts import judge_user_message
from evaluations.judge.services import judge_run_create
from evaluations.models import ModelResponse

from .conftest import write_json


def test_translated_case_english_message_is_unchanged_by_the_language_argument():
    plain = judge_user_message(question="Q?", response="A.", reference_answer="R.", tradition="Reformed")
    assert judge_user_message(question="Q?", response="A.", reference_answer="R.", tradition="Reformed",
                              language="en") == plain
    assert judge_user_message(question="Q?", response="A.", reference_answer="R.", tradition="Reformed",
                              language="en-GB") == plain
    assert "LANGUAGE" not in plain


def test_translated_case_spanish_message_names_its_language_before_the_closing_line():
    message = judge_user_message(question="¿Qué es la gracia?", response="Favor inmerecido.", language="es-419")
    blocks = message.split("\n\n")
    assert blocks[-2].startswith("CASE LANGUAGE: Spanish (es-419)\n")
    assert blocks[-1] == "Evaluate the model response and provide scores for each dimension."


def test_translated_case_run_records_its_languages_and_sends_each_its_message(
        db, tmp_path, rubric_v1, judge_settings):  # type: ignore[no-untyped-def]
    from evaluations.importing import import_file

    base = {"dimension": "doctrinal", "difficulty": "easy", "question_type": "factual_recall"}
    cases = [{**base, "external_id": "G-en", "prompt": "What is grace?"},
             {**base, "external_id": "G-ko", "prompt": "은혜란 무엇입니까?", "language": "ko", "source_case": "G-en",
              "translation_method": "human", "translator": "Kim"}]
    responses = [{"case": c["external_id"], "model": "openai/gpt-4o", "provider": "OpenAI", "family": "gpt",
                  "text": "Unmerited favour."} for c in cases]
    import_file(path=write_json(tmp_path / "cases.json", cases), kind="cases", progress=False)
    import_file(path=write_json(tmp_path / "responses.json", responses), kind="responses", progress=False)
    run = judge_run_create(rubric=rubric_v1)
    assert run.case_languages == ["en", "ko"]
    items = {ModelResponse.objects.get(pk=i.response_id).test_case.external_id: i for i in work_items(run=run)}
    assert "CASE LANGUAGE: Korean (ko)" in items["G-ko"].user_message
    assert items["G-en"].user_message == judge_user_message(question="What is grace?", response="Unmerited favour.")
