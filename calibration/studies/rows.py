"""An import's ratings held column by column (issue 33 part 4: a million-row upload in bounded memory).

Each distinct item, rater and dimension name is kept once (`Names`, a dense code per name); a rating is a code per
column plus its value and where it came from, in `array` columns: about 25 bytes a rating, where a list of row
objects with their own tuples and keys took about ten times that. The checks and the writes read the columns as
numpy arrays (`Rows.columns`); a row can still be read back as a `Row` (messages, the upload page's preview).
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import overload

import numpy as np

KIND_CODES = ("human", "judge")  # a rating's `kind` column holds the index of its rater's kind here


@dataclass(frozen=True, slots=True)
class Row:
    """One rating as messages and the preview read it."""

    where: str | int  # a JSON path, or a line (a row's number for the API), placed by `Parsed.place`
    item: str
    dimension: str
    rater: str
    kind: str
    value: float
    group: str = ""


class Names:
    """Each distinct name once, numbered in order of first appearance (the rows hold the numbers)."""

    __slots__ = ("codes", "names")

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            code = self.codes[name] = len(self.names)
            self.names.append(name)
        return code

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class Columns:
    """The ratings as numpy arrays of equal length: the codes (int32) of item, rater and dimension (indices into
    `Rows.items.names` …), the kind's code (int8, into `KIND_CODES`) and the value (float64). Widen the codes to
    int64 before multiplying them."""

    item: np.ndarray
    rater: np.ndarray
    dimension: np.ndarray
    kind: np.ndarray
    value: np.ndarray


class Rows:
    """The ratings of an import, column by column; `append` takes a `Row`, the long reader fills the columns itself
    (`append_codes`). `where` is a line (≥ 1, shown after `Parsed.prefix`) or, as −1 − i, the JSON path `paths[i]`.
    `rater_first[c]` is the first row of rater `c` (a rater's kind is the one of its first row); `rater_group[c]`
    its group (the last row's, as the import has always taken it)."""

    def __init__(self) -> None:
        self.items, self.raters, self.dimensions, self.groups = Names(), Names(), Names(), Names()
        self.item, self.rater, self.dimension = array("i"), array("i"), array("i")
        self.kind = array("b")
        self.value = array("d")
        self.where = array("q")
        self.paths: list[str] = []
        self.rater_first = array("q")
        self.rater_group: dict[int, str] = {}
        self._columns: Columns | None = None

    def append(self, row: Row) -> None:
        where = row.where
        if isinstance(where, str):
            self.paths.append(where)
            where = -len(self.paths)
        rater = self.raters.code(row.rater)
        if rater == len(self.rater_first):
            self.rater_first.append(len(self.item))
        if row.group:
            self.rater_group[rater] = row.group
        self.append_codes(where, self.items.code(row.item), rater, self.dimensions.code(row.dimension),
                          KIND_CODES.index(row.kind), row.value)

    def append_codes(self, where: int, item: int, rater: int, dimension: int, kind: int, value: float) -> None:
        self.where.append(where)
        self.item.append(item)
        self.rater.append(rater)
        self.dimension.append(dimension)
        self.kind.append(kind)
        self.value.append(value)
        self._columns = None

    def appenders(self) -> tuple[Callable[[int], None], Callable[[int], None], Callable[[int], None],
                                 Callable[[int], None], Callable[[int], None], Callable[[float], None]]:
        """The `append` of the columns where, item, rater, dimension, kind, value (`append_codes` without a call per
        row: a reader of a million rows binds them once and appends to each)."""
        self._columns = None
        return (self.where.append, self.item.append, self.rater.append, self.dimension.append, self.kind.append,
                self.value.append)

    def columns(self) -> Columns:
        """The columns as numpy arrays (copies: the `array` columns may still grow)."""
        if self._columns is None:
            self._columns = Columns(item=np.array(self.item, dtype=np.int32), rater=np.array(self.rater, dtype=np.int32),
                                    dimension=np.array(self.dimension, dtype=np.int32),
                                    kind=np.array(self.kind, dtype=np.int8), value=np.array(self.value, dtype=float))
        return self._columns

    def where_of(self, index: int) -> str | int:
        where = self.where[index]
        return self.paths[-where - 1] if where < 0 else where

    def __len__(self) -> int:
        return len(self.item)

    def __bool__(self) -> bool:
        return len(self.item) > 0

    def row(self, index: int) -> Row:
        rater = self.rater[index]
        return Row(self.where_of(index), self.items.names[self.item[index]], self.dimensions.names[self.dimension[index]],
                   self.raters.names[rater], KIND_CODES[self.kind[index]], self.value[index],
                   self.rater_group.get(rater, ""))

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self.row(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.row(index)

    def __iter__(self) -> Iterator[Row]:
        return (self.row(i) for i in range(len(self)))
