# Every snapshot gets a kind and a subject (filled by 0003), position checks their pairwise run, and the small kinds
# a typed summary of what their list pages read without the payload. The constraints naming a cycle, a study or a
# leaderboard go first: 0003 adds rows of the other kinds.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0012_generation_conditions_required'),
        ('evidence', '0001_move_in'),
    ]

    operations = [
        # versions now count per kind and subject (0004 adds the constraints that say so)
        migrations.RemoveConstraint(
            model_name='snapshot',
            name='snapshot_one_per_cycle_version',
        ),
        migrations.RemoveConstraint(
            model_name='snapshot',
            name='snapshot_one_per_study_version',
        ),
        migrations.RemoveConstraint(
            model_name='snapshot',
            name='snapshot_one_per_leaderboard_version',
        ),
        migrations.RemoveConstraint(
            model_name='snapshot',
            name='snapshot_of_a_cycle_a_study_or_a_leaderboard',
        ),
        migrations.AddField(
            model_name='snapshot',
            name='kind',
            field=models.CharField(choices=[('cycle_report', 'Cycle report'), ('study_report', 'Study report'), ('calibrated', 'Calibrated leaderboard'), ('case_review', 'Case-review report'), ('irt_fit', 'IRT difficulty fit'), ('bias_check', 'Bias check')], default='cycle_report', max_length=20),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='snapshot',
            name='subject',
            field=models.CharField(default='', help_text="What it is of, within its kind: an id, 'DIMENSION/rotation', 'check/run-N'.", max_length=120),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='snapshot',
            name='pairwise_run',
            field=models.ForeignKey(blank=True, help_text='Position checks only: the pairwise run read.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='evaluations.pairwiserun'),
        ),
        migrations.AddField(
            model_name='snapshot',
            name='summary',
            field=models.JSONField(blank=True, default=dict, help_text='What list pages read without the payload (see SnapshotSummary).'),
        ),
    ]
