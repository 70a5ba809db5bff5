# CaseReviewCycle moved from `annotations` to `casereview` (state only; its table kept its name), so the
# report's foreign key now names the new app. The database constraint already points at that same table.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calibration', '0011_calibrated_leaderboard_snapshots'),
        ('casereview', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='casereviewreport',
                    name='cycle',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='reports', to='casereview.casereviewcycle'),
                ),
            ],
            database_operations=[],
        ),
    ]
