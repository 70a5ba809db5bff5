# The second half of casereview 0001: the case-review models leave annotations' migration state. The tables are
# untouched (casereview owns them now, under their original names); their content types follow them, so
# permissions and admin history stay attached.

from django.db import migrations

MOVED = ("casereviewcycle", "casereview", "caseflag", "theobertaudit")


def content_types_follow(apps, schema_editor, source="annotations", target="casereview"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MOVED:
        if not ContentType.objects.using(db).filter(app_label=target, model=model).exists():
            ContentType.objects.using(db).filter(app_label=source, model=model).update(app_label=target)


def content_types_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, source="casereview", target="annotations")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('annotations', '0011_save_receipts'),
        ('casereview', '0001_initial'),
        ('calibration', '0012_case_review_report_cycle_in_casereview'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay where they are (the models keep their db_table): only Django's state moves.
            state_operations=[
                migrations.DeleteModel(name='CaseFlag'),
                migrations.DeleteModel(name='CaseReview'),
                migrations.DeleteModel(name='TheoBertAudit'),
                migrations.DeleteModel(name='CaseReviewCycle'),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_back),
    ]
