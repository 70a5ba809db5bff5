"""On PostgreSQL the database itself keeps the audit trail append-only (issue 33): a row trigger refuses every
UPDATE, and every DELETE except inside the retention prune's transaction, which sets the transaction-local
setting `faithbench.audit_prune` (`audit.services.audit_prune`). So neither a bug that bypasses the model's
guards nor a hand-written query through the application's database role edits or removes a row. A superuser can
still drop the trigger: that is a database administrator's act, outside the application.

SQLite has no such guard; the model and its queryset refuse as before (ARCHITECTURE.md, decision log).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION audit_auditevent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('faithbench.audit_prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit rows are append-only: % refused on audit_auditevent', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
CREATE TRIGGER audit_auditevent_append_only BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_auditevent_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_auditevent_append_only();
"""


def _on_postgresql(sql: str) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)  # the RAISE format has a literal %
    return run


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_audit_events")]

    operations = [migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP), elidable=False)]
