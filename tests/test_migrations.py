"""Migrations run from zero to the latest state and back on the test run's database (SQLite, or
PostgreSQL when DATABASE_URL is set), leave a schema that matches the models, and carry their data
literally instead of importing today's code.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState

from evaluations.models import RubricVersion
from tests.evaluations.reference_rows import methodology_reference_rows, stored_reference_rows

ROOT = Path(__file__).resolve().parent.parent
PROJECT_APPS = ("accounts", "evaluations", "annotations", "evidence", "casereview", "calibration", "delphi", "config")
FIRST_PARTY = (*PROJECT_APPS, "config", "stats")

Target = tuple[str, str | None]


def migrate(targets: list[Target]) -> MigrationExecutor:
    """Migrate the test database to `targets`; return an executor whose loader has the new applied state."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor


def latest() -> list[Target]:
    return list(MigrationLoader(connection).graph.leaf_nodes())


def zero() -> list[Target]:
    """Unapply every project migration, and with them every third-party one that depends on ours
    (admin, allauth, authtoken: they reference the custom user). Apps that do not depend on ours stay
    applied (contenttypes, auth, sessions, django_tasks_database, whose 0013 cannot be reversed)."""
    return [(app, None) for app in PROJECT_APPS]


def applied_project_migrations(executor: MigrationExecutor) -> list[tuple[str, str]]:
    return sorted(key for key in executor.loader.applied_migrations if key[0] in PROJECT_APPS)


def project_tables() -> set[str]:
    existing = set(connection.introspection.table_names())
    return {model._meta.db_table for app in PROJECT_APPS
            for model in apps.get_app_config(app).get_models(include_auto_created=True)} & existing


def schema_differences() -> list[str]:
    """Every way the database's tables, columns, nullability, constraints and indexes differ from the models."""
    problems: list[str] = []
    introspection = connection.introspection
    with connection.cursor() as cursor:
        tables = set(introspection.table_names(cursor))
        for model in apps.get_models(include_auto_created=True):
            meta = model._meta
            if not meta.managed or meta.proxy:
                continue
            if meta.db_table not in tables:
                problems.append(f"{meta.label}: table {meta.db_table} is missing")
                continue
            columns = {c.name: c for c in introspection.get_table_description(cursor, meta.db_table)}
            fields = {f.column: f for f in meta.local_concrete_fields}
            if set(columns) != set(fields):
                problems.append(f"{meta.label}: columns {sorted(columns)} != fields {sorted(fields)}")
            for column, field in fields.items():
                if column in columns and bool(columns[column].null_ok) != field.null:
                    problems.append(f"{meta.label}.{field.name}: null_ok={columns[column].null_ok}, null={field.null}")
            constraints = introspection.get_constraints(cursor, meta.db_table)
            for name in [c.name for c in meta.constraints] + [i.name for i in meta.indexes]:
                if name not in constraints:
                    problems.append(f"{meta.label}: constraint or index {name} is missing")
    return problems


def pending_model_changes() -> dict[str, list[str]]:
    """What `makemigrations` would write now: {app: [operation descriptions]} (empty when in step)."""
    loader = MigrationLoader(connection)
    changes = MigrationAutodetector(loader.project_state(), ProjectState.from_apps(apps)).changes(graph=loader.graph)
    return {app: [op.describe() for migration in migrations for op in migration.operations]
            for app, migrations in changes.items()}


@pytest.fixture
def back_to_latest() -> Iterator[None]:
    """Whatever the test does to the schema, leave the database fully migrated for the tests after it."""
    try:
        yield
    finally:
        migrate(latest())


# Transactional: schema changes cannot run inside the test's wrapping transaction (SQLite refuses them). The
# flush afterwards is followed by the migration-made rows the test database was created with (tests/conftest.py).
@pytest.mark.django_db(transaction=True)
def test_migrations_run_from_zero_to_latest_and_back_and_match_the_models(back_to_latest: None) -> None:
    assert project_tables(), "the test database starts fully migrated"

    executor = migrate(zero())
    assert applied_project_migrations(executor) == []
    assert project_tables() == set()

    executor = migrate(latest())
    assert executor.migration_plan(latest()) == []
    assert set(executor.loader.applied_migrations) == set(executor.loader.graph.nodes)
    assert stored_reference_rows() == methodology_reference_rows()
    assert schema_differences() == []
    assert pending_model_changes() == {}

    # Undo the reference data alone (and everything that depends on it), then redo it.
    migrate([("evaluations", "0001_initial")])
    assert not RubricVersion.objects.filter(version="1.0").exists()
    migrate(latest())
    assert stored_reference_rows() == methodology_reference_rows()
    assert schema_differences() == []


def first_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))  # a relative import is first-party by definition
    return {name for name in names if name.startswith(".") or name.split(".")[0] in FIRST_PARTY}


MIGRATIONS = sorted(p for app in PROJECT_APPS for p in (ROOT / app / "migrations").glob("[0-9]*.py"))


@pytest.mark.parametrize("path", MIGRATIONS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_migration_does_not_depend_on_todays_code(path: Path) -> None:
    # Data migrations carry their data literally. Schema migrations may name only what the autodetector
    # itself serialises by reference (`import accounts.models` for a callable default or a manager).
    imports = first_party_imports(path)
    if "RunPython" in path.read_text(encoding="utf-8"):
        assert imports == set(), f"{path.name} is a data migration that imports project code: {imports}"
    else:
        assert all(name.endswith(".models") and not name.startswith(".") for name in imports), imports
