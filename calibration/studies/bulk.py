"""Fast writes of many rows of one model, inside the caller's transaction (a study import of a million ratings).

The ORM's `bulk_create` builds a model instance per row and an SQL text per batch: about 50 µs a row, most of an
import's time. Here the rows go as columns straight to the database: PostgreSQL's `COPY … FROM STDIN` (psycopg's
`cursor.copy`; the table and columns are `psycopg.sql.Identifier`s), elsewhere (SQLite) one parametrised INSERT run by
`executemany`. Table and column names come from the model's `_meta`, quoted by the backend — never from input;
values are always parameters. What the ORM would do on a save is not done (no signals, no `save()`, no defaults):
callers pass every column.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model


def _columns(model: type[Model], fields: Sequence[str]) -> tuple[str, list[str]]:
    meta = model._meta
    columns = {field.name: str(field.column) for field in meta.concrete_fields}
    return meta.db_table, [columns[name] for name in fields]


def bulk_insert(model: type[Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Insert `rows` (tuples in the order of `fields`, model field names) into `model`'s table."""
    table, columns = _columns(model, fields)
    if connection.vendor == "postgresql":
        from psycopg import sql  # only where the backend is psycopg

        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns))
        with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
        return
    quote = connection.ops.quote_name
    statement_text = (f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) "
                      f"VALUES ({', '.join(['%s'] * len(columns))})")
    with connection.cursor() as cursor:
        cursor.executemany(statement_text, list(rows))  # a batch: the caller's rows come in batches


def bulk_update(model: type[Model], field: str, rows: Iterable[tuple[Any, Any]]) -> None:
    """Set `field` of the rows given as (new value, pk)."""
    table, (column, pk) = _columns(model, [field, "id"])
    quote = connection.ops.quote_name
    statement_text = f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE {quote(pk)} = %s"
    with connection.cursor() as cursor:
        cursor.executemany(statement_text, list(rows))


def bulk_checked() -> None:
    """Run now the deferred checks of what this transaction wrote so far (PostgreSQL: the foreign keys of the rows
    just copied; Django's `check_constraints`, SET CONSTRAINTS ALL IMMEDIATE then DEFERRED). A million rows' checks
    are most of an import's database time: made batch by batch, progress and a cancel see them, and the commit does
    not hold them all. Elsewhere nothing (SQLite checks its foreign keys at the commit)."""
    if connection.vendor == "postgresql":
        connection.check_constraints()
