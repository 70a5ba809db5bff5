"""Imports are atomic, idempotent, report every bad row with file:line:field, and exports round-trip."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluations.importing import ImportFailed, export_to_path, import_file
from evaluations.models import EvaluatedModel, ModelResponse, TestCase, TheoBertCase

HELD_OUT_SECRET = "ZEPHANIAH-SECRET-7781"


def case(external_id: str, **over: object) -> dict:
    record = {
        "external_id": external_id, "dimension": "textual", "difficulty": "hard", "tradition": "reformed",
        "question_type": "factual_recall", "visibility": "public", "is_active": True,
        "prompt": f"What does ἱλαστήριον mean in Romans 3:25? ({external_id})", "reference_answer": "", "version": 1,
    }
    record.update(over)
    return record


def response(case_id: str, model: str = "openai/gpt-4o", **over: object) -> dict:
    record = {
        "case": case_id, "model": model, "provider": "OpenAI", "family": "gpt", "run_label": "r1",
        "text": f"An answer to {case_id} mentioning חֶסֶד.", "temperature": 0.7, "max_tokens": 2000,
        "system_prompt": "", "settings": {}, "prompt_tokens": 40, "completion_tokens": 120,
    }
    record.update(over)
    return record


def theobert(case_id: str, **over: object) -> dict:
    record = {
        "id": case_id, "type": "doctrinal_association", "category": "soteriology", "difficulty": "medium",
        "input": "We are reconciled to God through the [MASK] of his Son.", "targets": ["death"], "foils": [],
        "acceptable_alternatives": ["blood"], "failure_examples": ["love"], "pass_condition": "target_in_top_k",
        "k": 5, "reference": "Romans 5:10", "reasoning": "Reconciliation through the death of the Son.",
        "surface_confounder": "",
    }
    record.update(over)
    return record


def write_json(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    return write_json(tmp_path / "cases.json", [case(f"C-{i:03d}") for i in range(1, 6)])


def test_import_creates_cases_with_every_facet(db, cases_file):
    report = import_file(path=cases_file, kind="cases")
    assert (report.created, report.updated, report.unchanged) == (5, 0, 0)
    stored = TestCase.objects.get(external_id="C-003")
    assert stored.tradition.key == "reformed"
    assert stored.dimension == "textual" and stored.difficulty == "hard"
    assert "ἱλαστήριον" in stored.prompt


def test_three_bad_rows_are_all_named_and_nothing_is_written(db, tmp_path):
    records = [
        case("C-001"),
        case("C-002", dimension="ethics"),                 # line of record 2: bad enum
        case("C-003"),
        case("C-004", difficulty=None),                    # record 4: missing required value
        case("C-005", version="two"),                      # record 5: not a number
    ]
    path = write_json(tmp_path / "bad.json", records)
    with pytest.raises(ImportFailed) as info:
        import_file(path=path, kind="cases")
    text = path.read_text().splitlines()
    starts = [i + 1 for i, line in enumerate(text) if line == "  {"]
    located = [(e.line, e.field) for e in info.value.errors]
    assert located == [(starts[1], "dimension"), (starts[3], "difficulty"), (starts[4], "version")]
    rendered = [str(e) for e in info.value.errors]
    assert rendered[0].startswith(f"{path}:{starts[1]}:dimension: unknown value 'ethics'")
    assert TestCase.objects.count() == 0


def test_bad_rows_in_csv_and_jsonl_name_their_lines(db, tmp_path):
    header = ["external_id", "dimension", "difficulty", "tradition", "question_type", "visibility", "is_active",
              "prompt", "reference_answer", "version"]
    rows = [
        ["A-1", "doctrinal", "easy", "", "factual_recall", "public", "true", "What is the filioque?", "", "1"],
        ["A-2", "doctrinal", "easy", "lutheran", "factual_recall", "public", "true", "What is theosis?", "", "1"],
        ["A-3", "doctrinal", "easy", "", "factual_recall", "public", "perhaps", "Multi-line\nprompt", "", "1"],
        ["A-4", "doctrinal", "easy", "", "factual_recall", "secret", "true", "What is kenosis?", "", "1"],
    ]
    path = write_csv(tmp_path / "cases.csv", header, rows)
    with pytest.raises(ImportFailed) as info:
        import_file(path=path, kind="cases")
    # A-3's prompt spans two physical lines, so A-4 starts on line 6.
    assert [(e.line, e.field) for e in info.value.errors] == [(3, "tradition"), (4, "is_active"), (6, "visibility")]

    jsonl = write_jsonl(tmp_path / "cases.jsonl", [case("B-1"), case("B-2", question_type="essay"), case("B-1")])
    with pytest.raises(ImportFailed) as info:
        import_file(path=jsonl, kind="cases")
    assert [(e.line, e.field, e.message) for e in info.value.errors] == [
        (2, "question_type", "unknown value 'essay'; expected one of factual_recall, comparative_analysis, "
                             "applied_reasoning, contested_topic"),
        (3, "external_id", "duplicate of the record on line 1"),
    ]
    assert TestCase.objects.count() == 0


def test_unknown_fields_and_syntax_errors_are_reported(db, tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [case("D-1", colour="blue")])
    with pytest.raises(ImportFailed, match=r"x.jsonl:1:colour: unknown field"):
        import_file(path=path, kind="cases")
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"external_id": "E-1",\n  "dimension": }\n]\n')
    with pytest.raises(ImportFailed, match=r"broken.json:3:16: invalid JSON at column 16: Expecting value"):
        import_file(path=broken, kind="cases")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ImportFailed, match="file is empty"):
        import_file(path=empty, kind="cases")


def test_reimport_changes_nothing_and_upserts_by_external_id(db, cases_file, tmp_path):
    import_file(path=cases_file, kind="cases")
    before = {c.external_id: (c.pk, c.updated_at) for c in TestCase.objects.all()}
    report = import_file(path=cases_file, kind="cases")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 5)
    assert {c.external_id: (c.pk, c.updated_at) for c in TestCase.objects.all()} == before

    changed = write_json(tmp_path / "changed.json", [case("C-002", difficulty="expert"), case("C-900")])
    report = import_file(path=changed, kind="cases")
    assert (report.created, report.updated, report.unchanged) == (1, 1, 0)
    assert TestCase.objects.get(external_id="C-002").difficulty == "expert"
    assert TestCase.objects.get(external_id="C-002").pk == before["C-002"][0]


def test_responses_need_known_cases_and_create_models(db, cases_file, tmp_path):
    import_file(path=cases_file, kind="cases")
    path = write_jsonl(tmp_path / "responses.jsonl", [
        response("C-001"), response("C-002"),
        response("C-404"),
        response("C-003", model="acme/new-model", provider="", family="acme"),
        response("C-004", temperature=0.715),
    ])
    with pytest.raises(ImportFailed) as info:
        import_file(path=path, kind="responses")
    assert [(e.line, e.field) for e in info.value.errors] == [(3, "case"), (4, "provider"), (5, "temperature")]
    assert ModelResponse.objects.count() == 0 and EvaluatedModel.objects.count() == 0

    good = write_jsonl(tmp_path / "good.jsonl", [response("C-001"), response("C-002"), response("C-001", run_label="r2")])
    assert import_file(path=good, kind="responses").created == 3
    assert EvaluatedModel.objects.get().family == "gpt"
    assert import_file(path=good, kind="responses").unchanged == 3

    clash = write_jsonl(tmp_path / "clash.jsonl", [response("C-003", family="claude")])
    with pytest.raises(ImportFailed, match="clash.jsonl:1:family: 'claude' disagrees"):
        import_file(path=clash, kind="responses")


@pytest.mark.parametrize(
    ("override", "field", "fragment"),
    [
        ({"input": "We are reconciled to God through his Son."}, "input", "must contain [MASK]"),
        ({"pass_condition": "target_in_top_3"}, "pass_condition", "unknown value 'target_in_top_3'"),
        ({"type": "contrastive_theology", "pass_condition": "correct_beats_foil", "foils": []}, "foils",
         "pass_condition correct_beats_foil needs at least one foil"),
    ],
)
def test_theobert_cases_that_break_the_schema_are_rejected(db, tmp_path, override, field, fragment):
    path = write_json(tmp_path / "eval.json", [theobert("T-1"), theobert("T-2", **override)])
    with pytest.raises(ImportFailed) as info:
        import_file(path=path, kind="theobert")
    [error] = info.value.errors
    second_record = [i + 1 for i, line in enumerate(path.read_text().splitlines()) if line == "  {"][1]
    assert (error.line, error.field) == (second_record, field)
    assert fragment in error.message
    assert TheoBertCase.objects.count() == 0


def test_theobert_case_with_a_foil_is_accepted(db, tmp_path):
    path = write_json(tmp_path / "eval.json", [theobert(
        "T-9", type="contrastive_theology", pass_condition="correct_beats_foil", foils=["works"],
        input="Salvation is a gift of [MASK], not of works, lest anyone boast.", targets=["grace"],
        surface_confounder="'works' appears later in the sentence")])
    assert import_file(path=path, kind="theobert").created == 1
    assert TheoBertCase.objects.get().foils == ["works"]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_export_import_export_is_byte_identical(db, tmp_path, fmt, django_db_blocker):
    cases = [case("R-1", reference_answer="Mercy, covenant love: חֶסֶד.\nSecond line, with \"quotes\", and a comma."),
             case("R-2", tradition=None, dimension="historical", is_active=False, version=3),
             case("R-3", visibility="held_out")]
    responses = [response("R-1"), response("R-2", temperature=None, prompt_tokens=None, settings={"top_p": 1.0}),
                 response("R-1", model="google/gemini-2.5-pro", provider="Google", family="gemini", temperature=1)]
    tb = [theobert("T-1"), theobert("T-2", foils=["law"], type="contrastive_theology",
                                    pass_condition="correct_beats_foil", k=10)]
    import_file(path=write_json(tmp_path / "c.json", cases), kind="cases")
    import_file(path=write_json(tmp_path / "r.json", responses), kind="responses")
    import_file(path=write_json(tmp_path / "t.json", tb), kind="theobert")
    first = {}
    for kind in ("cases", "responses", "theobert"):
        out = tmp_path / f"first-{kind}.{fmt}"
        export_to_path(kind=kind, path=out, include_held_out=True)
        first[kind] = out.read_bytes()
    # Empty the database, import the exports, export again.
    ModelResponse.objects.all().delete()
    EvaluatedModel.objects.all().delete()
    TestCase.objects.all().delete()
    TheoBertCase.objects.all().delete()
    for kind in ("cases", "responses", "theobert"):
        import_file(path=tmp_path / f"first-{kind}.{fmt}", kind=kind)
    for kind in ("cases", "responses", "theobert"):
        out = tmp_path / f"second-{kind}.{fmt}"
        export_to_path(kind=kind, path=out, include_held_out=True)
        assert out.read_bytes() == first[kind], kind
    assert "חֶסֶד" in first["cases"].decode()


def test_export_leaves_out_held_out_cases_and_their_responses_by_default(db, tmp_path):
    import_file(path=write_json(tmp_path / "c.json", [case("P-1"), case("H-1", visibility="held_out",
                                                                          prompt=HELD_OUT_SECRET)]), kind="cases")
    import_file(path=write_json(tmp_path / "r.json", [response("P-1"), response("H-1")]), kind="responses")
    for kind in ("cases", "responses"):
        out = tmp_path / f"{kind}.jsonl"
        export_to_path(kind=kind, path=out)
        body = out.read_text()
        assert "H-1" not in body and HELD_OUT_SECRET not in body
        assert "P-1" in body


def test_held_out_text_never_reaches_the_logs_or_error_messages(db, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    good = write_json(tmp_path / "c.json", [case("H-1", visibility="held_out", prompt=HELD_OUT_SECRET,
                                                 reference_answer=HELD_OUT_SECRET)])
    import_file(path=good, kind="cases")
    bad = write_json(tmp_path / "bad.json", [case("H-2", visibility="held_out", prompt=HELD_OUT_SECRET,
                                                  reference_answer=HELD_OUT_SECRET, dimension=HELD_OUT_SECRET[:3],
                                                  version=HELD_OUT_SECRET)])
    with pytest.raises(ImportFailed) as info:
        import_file(path=bad, kind="cases")
    assert HELD_OUT_SECRET not in caplog.text
    # Values of a held-out record are never quoted, not even in short coded fields.
    assert [(e.field, e.message) for e in info.value.errors] == [
        ("dimension", "unknown value (value withheld: held-out record); expected one of textual, hermeneutical, "
                      "doctrinal, historical, apologetics, intertextual"),
        ("version", "must be a whole number, got (value withheld: held-out record)"),
    ]
    assert HELD_OUT_SECRET not in info.value.summary()


def test_import_command_reports_all_errors_and_writes_nothing(db, tmp_path, cases_file):
    bad = write_jsonl(tmp_path / "bad.jsonl", [case("Z-1", difficulty="trivial")])
    with pytest.raises(CommandError) as info:
        call_command("import_data", "cases", str(cases_file), str(bad))
    assert f"{bad}:1:difficulty" in str(info.value)
    assert TestCase.objects.count() == 0  # the good file was rolled back too

    from io import StringIO

    out = StringIO()
    call_command("import_data", "cases", str(cases_file), stdout=out)
    assert "5 created" in out.getvalue()
    out = StringIO()
    call_command("export_data", "cases", str(tmp_path / "out.csv"), stdout=out)
    assert "public only" in out.getvalue()


def test_json_and_jsonl_syntax_errors_name_their_line_and_column(db, tmp_path):
    good = json.dumps(case("J-1"))
    jsonl = tmp_path / "lines.jsonl"
    jsonl.write_text(f"{good}\n\n{good[:-1]}, \"x\" 1}}\n{json.dumps(case('J-2'))}\n")
    with pytest.raises(ImportFailed) as info:
        import_file(path=jsonl, kind="cases")
    [error] = info.value.errors
    bad_line = jsonl.read_text().splitlines()[2]
    assert (error.line, error.column) == (3, bad_line.index(" 1}") + 2)  # the line of the file, not "line 1"
    assert str(error).startswith(f"{jsonl}:3:{error.column}: invalid JSON at column {error.column}")
    missing_comma = tmp_path / "records.json"
    missing_comma.write_text(f"[\n  {good}\n  {json.dumps(case('J-2'))}\n]\n")
    with pytest.raises(ImportFailed, match=r"records.json:3:3: invalid JSON at column 3: expected ',' or ']'"):
        import_file(path=missing_comma, kind="cases")
    assert TestCase.objects.count() == 0
