"""Cases in several languages (issue 35 §2): a case's BCP 47 language, a translation's provenance, and responses'
languages, through the atomic import and the export; bad input names the line and field and writes nothing."""
from __future__ import annotations

import json

import pytest

from evaluations.domain import language_tag_clean
from evaluations.importing import ImportFailed, export_to_path, import_file
from evaluations.models import ModelResponse, TestCase

pytestmark = pytest.mark.django_db
BASE = {"dimension": "doctrinal", "difficulty": "medium", "question_type": "factual_recall"}


def write(tmp_path, name, rows):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def errors_of(path, kind="cases"):  # type: ignore[no-untyped-def]
    with pytest.raises(ImportFailed) as info:
        import_file(path=path, kind=kind, progress=False)
    return [(e.line, e.field) for e in info.value.errors], str(info.value)


@pytest.mark.parametrize(("given", "canonical"), [
    ("en", "en"), ("es-419", "es-419"), ("ko-kr", "ko-KR"), ("sr-latn-rs", "sr-Latn-RS"), ("grc", "grc"),
    ("hbo", "hbo"), ("de-CH-1996", "de-CH-1996"), ("pt_BR", "pt-BR")])
def test_translated_case_language_tags_in_common_shapes(given, canonical):  # type: ignore[no-untyped-def]
    assert language_tag_clean(given) == canonical


@pytest.mark.parametrize("bad", ["", "english", "xx", "e", "es-", "es--MX", "zz-ZZ", "en-US-x"])
def test_translated_case_bad_language_tags_are_refused(bad):  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        language_tag_clean(bad)


def test_translated_case_import_keeps_provenance_and_export_carries_it(tmp_path):  # type: ignore[no-untyped-def]
    rows = [
        # the translation comes first: its source is further on in the same file
        {**BASE, "external_id": "T-es", "prompt": "¿Qué enseña Trento sobre la justificación?", "language": "es",
         "source_case": "T-en", "translation_method": "machine_expert", "translator": "DeepL",
         "verified_by": "Dra. Ana Ruiz"},
        {**BASE, "external_id": "T-en", "prompt": "What did Trent teach about justification?"},
        {**BASE, "external_id": "T-ko", "prompt": "트리엔트 공의회는 칭의에 대해 무엇을 가르쳤습니까?", "language": "ko-kr",
         "source_case": "T-en", "translation_method": "human", "translator": "Kim Min-jun"},
    ]
    report = import_file(path=write(tmp_path, "cases.jsonl", rows), kind="cases", progress=False)
    assert report.created == 3
    spanish, korean = TestCase.objects.get(external_id="T-es"), TestCase.objects.get(external_id="T-ko")
    assert (spanish.language, spanish.source_case.external_id, spanish.translation_method, spanish.verified_by) == (
        "es", "T-en", "machine_expert", "Dra. Ana Ruiz")
    assert korean.language == "ko-KR" and korean.translator == "Kim Min-jun"
    assert TestCase.objects.get(external_id="T-en").language == "en"

    out = tmp_path / "export.jsonl"
    export_to_path(kind="cases", path=out)
    exported = {r["external_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert {k: exported["T-es"][k] for k in ("language", "source_case", "translator", "translation_method",
                                             "verified_by")} == {
        "language": "es", "source_case": "T-en", "translator": "DeepL", "translation_method": "machine_expert",
        "verified_by": "Dra. Ana Ruiz"}
    TestCase.objects.filter(source_case__isnull=False).delete()  # an original with translations is protected
    TestCase.objects.all().delete()
    again = import_file(path=out, kind="cases", progress=False)  # the export imports back
    assert again.created == 3 and TestCase.objects.get(external_id="T-ko").source_case.external_id == "T-en"


def test_translated_case_bad_rows_name_line_and_field_and_nothing_is_written(tmp_path):  # type: ignore[no-untyped-def]
    TestCase.objects.create(**BASE, external_id="OLD-es", prompt="¿Qué es la gracia?", language="es")
    rows = [
        {**BASE, "external_id": "B-1", "prompt": "Q1", "language": "klingon"},                       # line 1
        {**BASE, "external_id": "B-2", "prompt": "Q2", "language": "de", "source_case": "NOPE",
         "translation_method": "human"},                                                              # line 2
        {**BASE, "external_id": "B-3", "prompt": "Q3", "language": "es-MX", "source_case": "OLD-es",
         "translation_method": "machine"},                                                            # line 3
        {**BASE, "external_id": "B-4", "prompt": "Q4", "source_case": "OLD-es"},                      # line 4
        {**BASE, "external_id": "B-5", "prompt": "Q5", "translation_method": "human"},                # line 5
        {**BASE, "external_id": "B-6", "prompt": "Q6", "language": "ko", "source_case": "OLD-es",
         "translation_method": "machine_expert"},                                                     # line 6
        {**BASE, "external_id": "B-7", "prompt": "Q7"},                                               # fine
    ]
    where, text = errors_of(write(tmp_path, "bad.jsonl", rows))
    assert where == [(1, "language"), (2, "source_case"), (3, "source_case"), (4, "translation_method"),
                     (5, "source_case"), (6, "verified_by")]
    assert "unknown" in text or "not a language tag" in text
    assert "no test case with external_id 'NOPE'" in text and "is in 'es' too" in text
    assert TestCase.objects.count() == 1


def test_translated_case_response_records_the_language_it_was_asked_in(tmp_path):  # type: ignore[no-untyped-def]
    from evaluations.models import GenerationCondition

    GenerationCondition.objects.create(name="asked-in-german", language="de")
    import_file(path=write(tmp_path, "cases.jsonl", [
        {**BASE, "external_id": "R-en", "prompt": "What is grace?"},
        {**BASE, "external_id": "R-es", "prompt": "¿Qué es la gracia?", "language": "es", "source_case": "R-en",
         "translation_method": "human"}]), kind="cases", progress=False)
    model = {"model": "openai/gpt-4o", "provider": "OpenAI", "family": "gpt", "text": "…"}
    import_file(path=write(tmp_path, "responses.jsonl", [
        {**model, "case": "R-en"},                                    # standard condition: English
        {**model, "case": "R-en", "condition": "asked-in-german"},    # the condition's axis: German
        {**model, "case": "R-es", "language": "es"},                  # the translated case, asked in Spanish
    ]), kind="responses", progress=False)
    asked = {(r.test_case.external_id, r.condition.name): r.language for r in ModelResponse.objects.all()}
    assert asked == {("R-en", "standard"): "en", ("R-en", "asked-in-german"): "de", ("R-es", "standard"): "es"}

    where, text = errors_of(write(tmp_path, "claims.jsonl", [{**model, "case": "R-en", "run_label": "x",
                                                               "language": "ko"}]), kind="responses")
    assert where == [(1, "language")] and "claiming another" in text
    assert ModelResponse.objects.count() == 3
