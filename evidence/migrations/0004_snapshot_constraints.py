# The new constraints: versions count per kind and subject; the study column goes (studies are named by id in
# `subject`: they live in calibration, above evidence). The rest is help text, related names and ordering.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotations', '0011_save_receipts'),
        ('evaluations', '0012_generation_conditions_required'),
        ('evidence', '0003_fill_kinds_copy_results'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='snapshot',
            options={'ordering': ['kind', 'subject', '-version'], 'verbose_name': 'snapshot'},
        ),
        migrations.RemoveField(
            model_name='snapshot',
            name='study',
        ),
        migrations.AlterField(
            model_name='snapshot',
            name='cycle',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='snapshots', to='annotations.calibrationcycle'),
        ),
        migrations.AlterField(
            model_name='snapshot',
            name='input_hash',
            field=models.CharField(blank=True, help_text='SHA-256 of the exact input rows (reports: ratings.csv, in the bundle; small kinds: their inputs).', max_length=64),
        ),
        migrations.AlterField(
            model_name='snapshot',
            name='judge_run',
            field=models.ForeignKey(blank=True, help_text='The judge run read (compared with the experts, calibrated, or checked).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='evaluations.judgerun'),
        ),
        migrations.AlterField(
            model_name='snapshot',
            name='payload',
            field=models.JSONField(blank=True, help_text='The typed artefact, as JSON.', null=True),
        ),
        migrations.AlterField(
            model_name='snapshot',
            name='version',
            field=models.PositiveIntegerField(help_text='1, 2, 3, … per kind and subject, in the order requested.'),
        ),
        migrations.AddConstraint(
            model_name='snapshot',
            constraint=models.UniqueConstraint(fields=('kind', 'subject', 'version'), name='snapshot_one_per_subject_version'),
        ),
        migrations.AddConstraint(
            model_name='snapshot',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['cycle_report', 'study_report', 'calibrated', 'case_review', 'irt_fit', 'bias_check'])), name='snapshot_kind_valid'),
        ),
        migrations.AddConstraint(
            model_name='snapshot',
            constraint=models.CheckConstraint(condition=models.Q(('subject', ''), _negated=True), name='snapshot_has_subject'),
        ),
        migrations.AddConstraint(
            model_name='snapshot',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'cycle_report'), _negated=True), ('cycle__isnull', False), _connector='OR'), name='snapshot_cycle_report_has_cycle'),
        ),
        migrations.AddConstraint(
            model_name='snapshot',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'calibrated'), _negated=True), models.Q(('judge_run__isnull', False), ('label_cycle__isnull', False)), _connector='OR'), name='snapshot_calibrated_has_run_and_cycle'),
        ),
    ]
