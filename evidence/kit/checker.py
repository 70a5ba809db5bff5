"""The artefact checker: an artefact read as a reader reads it, every file against every other.

Each kind supplies an adapter (its `KindSpec.check`) that reads its figures from each of its files — the stored
JSON at full precision, the long CSV, the PDF's text (`pdf_text`), the bundle's README.txt — as `Reading`s of
`Figure`s keyed alike across files. The rules here are generic:

* **agreement**: the same figure (key) says the same value, interval, n and method label in every file that shows
  it, to the precision that file shows (a PDF's "0.772" agrees with the JSON's 0.771822);
* **intervals**: every interval contains its estimate, has low ≤ high and lies inside the figure's range (a
  coefficient in [−1, 1], a share in [0, 1], a composite in its scale);
* **thin evidence**: no interval from fewer items than its method needs (`Figure.min_n`);
* **method statements**: a file's sentence about how intervals were made (`Reading.methods_stated`) names
  exactly the methods its rows used;
* **labels**: no internal key is shown where a label exists (`labels`: key → label, searched in the human text
  of each reading).

`artefact_check` returns the `Problem`s (empty: clean). The evidence service runs the kind's check on every
computed version before storing it (a version with problems is stored as *failed checks*), and
`manage.py check_artefact` runs it on stored versions or on an edited bundle.
"""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .numbers import method_label

COEFFICIENT = (-1.0, 1.0)  # agreement and correlation coefficients
SHARE = (0.0, 1.0)  # proportions (exact agreement, probabilities)
EPS = 1e-9


@dataclass(frozen=True)
class Figure:
    """One figure as one file shows it. `digits`: the decimals the file shows (None: full precision);
    `bounds`: the range the figure lives in; `min_n`: the fewest items its interval's method needs."""

    key: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    method: str | None = None  # the label a reader sees ("BCa"), not the stored key
    digits: int | None = None
    bounds: tuple[float, float] | None = None
    min_n: int = 0


@dataclass(frozen=True)
class Reading:
    """What one file of an artefact says: its figures, the interval methods it states, its human text."""

    file: str
    figures: list[Figure] = field(default_factory=list)
    methods_stated: frozenset[str] | None = None
    text: str = ""


@dataclass(frozen=True)
class Problem:
    """One failed rule, naming the figure and the file."""

    figure: str
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.figure}: {self.message}"


def _tolerance(*digits: int | None) -> float:
    shown = [d for d in digits if d is not None]
    return 0.5 * 10 ** -min(shown) + EPS if shown else EPS


def _close(a: float | None, b: float | None, tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol + 1e-12 * max(abs(a), abs(b))


def _figure_problems(figure: Figure, file: str) -> Iterable[Problem]:
    tol = _tolerance(figure.digits)
    has_interval = figure.low is not None or figure.high is not None
    if not has_interval:
        return
    if figure.low is None or figure.high is None:
        yield Problem(figure.key, file, "an interval with one end missing")
        return
    if figure.low > figure.high + tol:
        yield Problem(figure.key, file, f"interval [{figure.low}, {figure.high}] has low > high")
    if figure.value is not None and not (figure.low - tol <= figure.value <= figure.high + tol):
        yield Problem(figure.key, file, f"interval [{figure.low}, {figure.high}] does not contain its estimate "
                                        f"{figure.value}")
    if figure.bounds is not None:
        lo, hi = figure.bounds
        if figure.low < lo - tol or figure.high > hi + tol:
            yield Problem(figure.key, file, f"interval [{figure.low}, {figure.high}] lies outside the figure's "
                                            f"range [{lo}, {hi}]")
    if figure.bounds is not None and figure.value is not None:
        lo, hi = figure.bounds
        if not lo - tol <= figure.value <= hi + tol:
            yield Problem(figure.key, file, f"estimate {figure.value} lies outside the figure's range [{lo}, {hi}]")
    if figure.n is not None and figure.n < figure.min_n:
        yield Problem(figure.key, file, f"an interval from {figure.n} items (its method needs {figure.min_n})")


def _agreement_problems(key: str, shown: list[tuple[str, Figure]]) -> Iterable[Problem]:
    """Every file's figure against the most precise one."""
    reference_file, reference = min(shown, key=lambda fs: -1000 if fs[1].digits is None else -fs[1].digits)
    for file, figure in shown:
        if file == reference_file:
            continue
        tol = _tolerance(figure.digits, reference.digits)
        if not _close(figure.value, reference.value, tol):
            yield Problem(key, file, f"value {figure.value} where {reference_file} has {reference.value}")
        both_intervals = figure.low is not None and reference.low is not None
        if both_intervals and not (_close(figure.low, reference.low, tol) and _close(figure.high, reference.high, tol)):
            yield Problem(key, file, f"interval [{figure.low}, {figure.high}] where {reference_file} has "
                                     f"[{reference.low}, {reference.high}]")
        elif (figure.low is None) != (reference.low is None) and figure.digits is not None \
                and reference.digits is None and figure.low is not None:
            yield Problem(key, file, f"an interval where {reference_file} has none")
        if figure.n is not None and reference.n is not None and figure.n != reference.n:
            yield Problem(key, file, f"n = {figure.n} where {reference_file} has n = {reference.n}")
        if figure.method and reference.method and method_label(figure.method) != method_label(reference.method):
            yield Problem(key, file, f"method {figure.method} where {reference_file} has {reference.method}")


def _key_pattern(labels: Mapping[str, str]) -> re.Pattern[str] | None:
    keys = sorted((k for k, v in labels.items() if k and k != v), key=len, reverse=True)
    if not keys:
        return None
    # a key inside a word, a hyphenated name, an e-mail address or a dotted name ("catholic.es1@…") is not the key
    return re.compile(r"(?<![\w@.-])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w-]|[.@]\w)")


def artefact_check(readings: list[Reading], *, labels: Mapping[str, str] | None = None,
                   reference: str | None = None) -> list[Problem]:
    """Every rule over an artefact's readings (see the module's doc); empty when the artefact is clean.
    `reference`: the file (e.g. "report.json") every figure another file shows must also be in."""
    problems: list[Problem] = []
    by_key: dict[str, list[tuple[str, Figure]]] = defaultdict(list)
    used: set[str] = set()
    for reading in readings:
        for figure in reading.figures:
            problems.extend(_figure_problems(figure, reading.file))
            by_key[figure.key].append((reading.file, figure))
            if figure.method and figure.low is not None:
                used.add(method_label(figure.method))
    for key, shown in by_key.items():
        if len(shown) > 1:
            problems.extend(_agreement_problems(key, shown))
        if reference is not None and all(file != reference for file, _figure in shown):
            problems.extend(Problem(key, file, f"a figure {reference} does not have") for file, _figure in shown)
    for reading in readings:
        if reading.methods_stated is None:
            continue
        for missing in sorted(used - reading.methods_stated):
            problems.append(Problem("interval method", reading.file,
                                    f"{missing} intervals are reported but the file does not name {missing}"))
        for extra in sorted(reading.methods_stated - used):
            problems.append(Problem("interval method", reading.file,
                                    f"the file names {extra} intervals but no figure uses {extra}"))
    pattern = _key_pattern(labels or {})
    if pattern is not None:
        for reading in readings:
            for key in sorted(set(pattern.findall(reading.text))):
                problems.append(Problem(key, reading.file, f"internal key {key!r} shown where its label "
                                                           f"{(labels or {})[key]!r} exists"))
    return problems


# --- reading a recorded payload -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class IntervalRule:
    """Where a payload states a figure with its interval: in a JSON object holding both `value` and `interval`
    (a [low, high] pair), its n under `n` (if any), in `bounds`, from at least `min_n` items."""

    value: str
    interval: str
    bounds: tuple[float, float] | None = None
    n: str | None = None
    min_n: int = 0


def _walk(node: object, path: str) -> Iterable[tuple[str, Mapping[str, object]]]:
    if isinstance(node, Mapping):
        yield path, node
        for key, child in node.items():
            yield from _walk(child, f"{path}/{key}" if path else str(key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _walk(child, f"{path}[{index}]")


def payload_reading(payload: object, rules: Iterable[IntervalRule], *, file: str = "payload") -> Reading:
    """Every figure with an interval a recorded payload states (case-review reports, IRT fits, bias checks: kinds
    stored as one JSON document, shown by their pages), found by `rules` wherever it sits, keyed by its JSON path."""
    rules = list(rules)
    figures = []
    for path, node in _walk(payload, ""):
        for rule in rules:
            if rule.value not in node or rule.interval not in node:
                continue
            value, bounds = node[rule.value], node[rule.interval]
            pair = bounds if isinstance(bounds, list | tuple) and len(bounds) == 2 else None
            number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
            count = node.get(rule.n) if rule.n else None
            figures.append(Figure(
                key=f"{path}/{rule.value}" if path else rule.value, value=number,
                low=pair[0] if pair else None, high=pair[1] if pair else None,
                n=count if isinstance(count, int) and not isinstance(count, bool) else None,
                bounds=rule.bounds, min_n=rule.min_n if pair and pair[0] is not None else 0))
    return Reading(file=file, figures=figures)


# --- reading files ------------------------------------------------------------------------------------------------

class PdfText:
    """A PDF's text as a reader sees it, line by line in layout order (poppler's pdftotext), extracted in a child
    process started at once, so a kind reads its other files meanwhile; `text()` waits for it."""

    def __init__(self, content: bytes) -> None:
        exe = shutil.which("pdftotext")
        if exe is None:  # pragma: no cover - pdftotext (poppler-utils) is part of the image
            raise RuntimeError("pdftotext is not installed: the artefact checker cannot read PDFs")
        self._folder = tempfile.TemporaryDirectory()
        source = Path(self._folder.name) / "in.pdf"
        source.write_bytes(content)
        self._process = subprocess.Popen([exe, "-layout", "-enc", "UTF-8", str(source), "-"],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def text(self) -> str:
        try:
            out, err = self._process.communicate(timeout=120)
        finally:
            self._folder.cleanup()
        if self._process.returncode != 0:
            raise ValueError(f"the PDF could not be read: {err.decode('utf-8', 'replace')[:300]}")
        return out.decode("utf-8", "replace")


def pdf_text(content: bytes) -> str:
    """A PDF's text as a reader sees it (see `PdfText`)."""
    return PdfText(content).text()


def bundle_members(content: bytes) -> dict[str, bytes]:
    """A citable zip's files by their names inside its folder ("README.txt", "tables.csv", …)."""
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name.split("/", 1)[-1]: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
