"""The condition of a response becomes required, with the standard condition as its default (0011 filled it)."""

import django.db.models.deletion
from django.db import migrations, models

import evaluations.models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0011_generation_conditions'),
    ]

    operations = [
        migrations.AlterField(
            model_name='modelresponse',
            name='condition',
            field=models.ForeignKey(default=evaluations.models.standard_condition_id, help_text='The generation condition this answer was produced under (default: the standard condition, §9.1).', on_delete=django.db.models.deletion.PROTECT, related_name='responses', to='evaluations.generationcondition'),
        ),
        migrations.AddConstraint(
            model_name='modelresponse',
            constraint=models.UniqueConstraint(fields=('test_case', 'model', 'run_label', 'condition', 'repetition'), name='response_one_per_case_model_run_condition_repetition'),
        ),
        migrations.AddConstraint(
            model_name='modelresponse',
            constraint=models.CheckConstraint(condition=models.Q(('repetition__gte', 1)), name='response_repetition_positive'),
        ),
    ]
