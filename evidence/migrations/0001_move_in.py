# ReportSnapshot and SnapshotFile move from `calibration` to `evidence` (as Snapshot and SnapshotFile): the one
# versioned, hashed snapshot of every computed artefact. No data moves: the models keep their tables
# (Meta.db_table), so only the migration state changes. The state created here is calibration's as it was
# (with its study column); 0002-0004 add the kind and the subject, fill them, and drop the study column.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_types_follow(apps, schema_editor, source=("calibration", "reportsnapshot"),
                         target=("evidence", "snapshot")):
    """Keep permissions and admin history attached: the moved models' content types change app label (and name)."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    pairs = [(source, target), ((source[0], "snapshotfile"), (target[0], "snapshotfile"))]
    for (old_app, old_model), (new_app, new_model) in pairs:
        if not ContentType.objects.using(db).filter(app_label=new_app, model=new_model).exists():
            ContentType.objects.using(db).filter(app_label=old_app, model=old_model).update(
                app_label=new_app, model=new_model)


def content_types_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, source=("evidence", "snapshot"), target=("calibration", "reportsnapshot"))


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('annotations', '0011_save_receipts'),
        ('calibration', '0012_case_review_report_cycle_in_casereview'),
        ('evaluations', '0012_generation_conditions_required'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay where they are (the models keep their db_table): only Django's state moves.
            state_operations=[
                migrations.CreateModel(
                    name='Snapshot',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('version', models.PositiveIntegerField(help_text='1, 2, 3, … per cycle, study or (calibrated leaderboard) judge run, in the order requested.')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Computing'), ('ready', 'Ready'), ('failed', 'Failed')], default='queued', max_length=10)),
                        ('seed', models.PositiveBigIntegerField(help_text='Bootstrap seed.')),
                        ('n_resamples', models.PositiveIntegerField(help_text='Bootstrap resamples (0: no intervals).')),
                        ('requested_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('progress', models.PositiveSmallIntegerField(default=0, help_text='Percent done while computing.')),
                        ('progress_note', models.CharField(blank=True, max_length=200)),
                        ('error', models.TextField(blank=True)),
                        ('input_hash', models.CharField(blank=True, help_text='SHA-256 of ratings.csv, the exact input rows (in the bundle).', max_length=64)),
                        ('input_counts', models.JSONField(blank=True, default=dict, help_text='Units, ratings, raters, judge and gold rows.')),
                        ('watermark', models.JSONField(blank=True, default=dict, help_text="Newest annotation event and gold decision read: what 'new since' counts from.")),
                        ('software', models.JSONField(blank=True, default=dict)),
                        ('payload', models.JSONField(blank=True, help_text='The typed report, as JSON.', null=True)),
                        ('rater_key', models.JSONField(blank=True, default=dict, help_text='Pseudonym → expert email. Shown to admins on the page; never exported.')),
                        ('cycle', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='report_snapshots', to='annotations.calibrationcycle')),
                        ('judge_run', models.ForeignKey(blank=True, help_text='The judge run compared with the experts (none: experts only).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='evaluations.judgerun')),
                        ('requested_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('study', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='report_snapshots', to='calibration.study')),
                        ('label_cycle', models.ForeignKey(blank=True, help_text="Calibrated leaderboards only: the cycle whose expert scores correct the judge run's.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='calibrated_snapshots', to='annotations.calibrationcycle')),
                    ],
                    options={
                        'db_table': 'calibration_reportsnapshot',
                        'verbose_name': 'report snapshot',
                        'ordering': ['cycle', '-version'],
                        'indexes': [],
                        'constraints': [models.UniqueConstraint(fields=('cycle', 'version'), name='snapshot_one_per_cycle_version'), models.CheckConstraint(condition=models.Q(('version__gte', 1)), name='snapshot_version_positive'), models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'running', 'ready', 'failed'])), name='snapshot_status_valid'), models.CheckConstraint(condition=models.Q(('progress__lte', 100)), name='snapshot_progress_0_100'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'ready'), _negated=True), models.Q(('input_hash', ''), _negated=True), _connector='OR'), name='snapshot_ready_has_hash'), models.UniqueConstraint(fields=('study', 'version'), name='snapshot_one_per_study_version'), models.UniqueConstraint(condition=models.Q(('label_cycle__isnull', False)), fields=('judge_run', 'version'), name='snapshot_one_per_leaderboard_version'), models.CheckConstraint(condition=models.Q(models.Q(('cycle__isnull', False), ('label_cycle__isnull', True), ('study__isnull', True)), models.Q(('cycle__isnull', True), ('label_cycle__isnull', True), ('study__isnull', False)), models.Q(('cycle__isnull', True), ('judge_run__isnull', False), ('label_cycle__isnull', False), ('study__isnull', True)), _connector='OR'), name='snapshot_of_a_cycle_a_study_or_a_leaderboard')],
                    },
                ),
                migrations.CreateModel(
                    name='SnapshotFile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('format', models.CharField(choices=[('json', 'Report (JSON)'), ('csv', 'Tables (long CSV)'), ('pdf', 'Report (PDF)'), ('ratings', 'Input rows (ratings.csv)'), ('bundle', 'Citable bundle (zip)')], max_length=10)),
                        ('content', models.BinaryField()),
                        ('sha256', models.CharField(max_length=64)),
                        ('size', models.PositiveIntegerField()),
                        ('snapshot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='files', to='evidence.snapshot')),
                    ],
                    options={
                        'db_table': 'calibration_snapshotfile',
                        'verbose_name': 'snapshot file',
                        'ordering': ['snapshot', 'format'],
                        'indexes': [],
                        'constraints': [models.UniqueConstraint(fields=('snapshot', 'format'), name='snapshot_file_one_per_format'), models.CheckConstraint(condition=models.Q(('format__in', ['json', 'csv', 'pdf', 'ratings', 'bundle'])), name='snapshot_file_format_valid')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_back),
    ]
