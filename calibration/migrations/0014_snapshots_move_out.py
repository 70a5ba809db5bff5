# The second half of evidence 0001-0004: ReportSnapshot and SnapshotFile leave calibration's migration state (their
# tables are untouched: evidence owns them now, under their original names), and the case-review reports, IRT
# difficulty fits and bias checks, copied into evidence's snapshots by evidence 0003, are deleted with their tables.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('calibration', '0013_delphi_move_out'),
        ('evidence', '0004_snapshot_constraints'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay where they are (evidence's models keep their db_table): only Django's state moves.
            state_operations=[
                migrations.RemoveField(model_name='reportsnapshot', name='cycle'),
                migrations.RemoveField(model_name='reportsnapshot', name='judge_run'),
                migrations.RemoveField(model_name='reportsnapshot', name='label_cycle'),
                migrations.RemoveField(model_name='reportsnapshot', name='requested_by'),
                migrations.RemoveField(model_name='reportsnapshot', name='study'),
                migrations.RemoveField(model_name='snapshotfile', name='snapshot'),
                migrations.DeleteModel(name='ReportSnapshot'),
                migrations.DeleteModel(name='SnapshotFile'),
            ],
            database_operations=[],
        ),
        migrations.DeleteModel(name='BiasCheck'),
        migrations.DeleteModel(name='CaseReviewReport'),
        migrations.DeleteModel(name='DifficultyFit'),
    ]
