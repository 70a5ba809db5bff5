# The case-review models (CaseReviewCycle, CaseReview, CaseFlag, TheoBertAudit) move from `annotations` into their
# own app, `casereview`. No data moves: the models keep their tables (Meta.db_table), so only the migration state
# changes; annotations 0012 deletes them from annotations' state and carries their content types over.

import annotations.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotations', '0011_save_receipts'),
        ('evaluations', '0012_generation_conditions_required'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables stay where they are (the models keep their db_table): only Django's state moves.
            state_operations=[
                migrations.CreateModel(
                    name='CaseReviewCycle',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=160)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('closed', 'Closed')], default='open', max_length=10)),
                        ('reviewers_per_case', models.PositiveSmallIntegerField(default=3)),
                        ('sample', models.JSONField(blank=True, default=dict, help_text='How the cases were chosen (all, or a stratified sample: size, seed, strata).')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('panel', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='review_cycles', to='annotations.panel')),
                    ],
                    options={
                        'db_table': 'annotations_casereviewcycle',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='CaseReview',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('public_id', models.CharField(default=annotations.models.public_id_new, editable=False, max_length=22, unique=True)),
                        ('case_version', models.PositiveIntegerField(help_text="The case's version when it was assigned and reviewed.")),
                        ('valid', models.CharField(blank=True, choices=[('yes', 'Yes'), ('no', 'No'), ('unsure', 'Unsure')], max_length=10, verbose_name='valid test of its dimension')),
                        ('reference_correct', models.CharField(blank=True, choices=[('yes', 'Yes'), ('partly', 'Partly'), ('no', 'No')], max_length=10, verbose_name='reference answer correct for this tradition')),
                        ('difficulty', models.CharField(blank=True, max_length=10)),
                        ('clarity', models.PositiveSmallIntegerField(blank=True, help_text='0 (unclear) – 3 (perfectly clear).', null=True)),
                        ('comment', models.TextField(blank=True)),
                        ('submitted_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('expert', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='case_reviews', to=settings.AUTH_USER_MODEL)),
                        ('test_case', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='reviews', to='evaluations.testcase')),
                        ('cycle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reviews', to='casereview.casereviewcycle')),
                    ],
                    options={
                        'db_table': 'annotations_casereview',
                        'ordering': ['cycle', 'test_case', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='CaseFlag',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('case_version', models.PositiveIntegerField()),
                        ('reasons', models.JSONField(default=list, help_text='Why: majority invalid, reference wrong, low agreement…')),
                        ('status', models.CharField(choices=[('open', 'Open'), ('revised', 'Revised'), ('retired', 'Retired'), ('kept', 'Kept as is')], default='open', max_length=10)),
                        ('resolved_at', models.DateTimeField(blank=True, null=True)),
                        ('note', models.TextField(blank=True)),
                        ('new_version', models.PositiveIntegerField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('resolved_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('test_case', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='flags', to='evaluations.testcase')),
                        ('cycle', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='casereview.casereviewcycle')),
                    ],
                    options={
                        'db_table': 'annotations_caseflag',
                        'ordering': ['cycle', 'test_case'],
                    },
                ),
                migrations.CreateModel(
                    name='TheoBertAudit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('public_id', models.CharField(default=annotations.models.public_id_new, editable=False, max_length=22, unique=True)),
                        ('case_sound', models.CharField(blank=True, choices=[('yes', 'Yes'), ('no', 'No'), ('unsure', 'Unsure')], help_text='Target right, foil truly wrong, no ambiguity.', max_length=10)),
                        ('verdict_right', models.CharField(blank=True, choices=[('yes', 'Yes'), ('no', 'No'), ('unsure', 'Unsure')], max_length=10)),
                        ('comment', models.TextField(blank=True)),
                        ('submitted_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('expert', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='theobert_audits', to=settings.AUTH_USER_MODEL)),
                        ('result', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='audits', to='evaluations.theobertresult')),
                    ],
                    options={
                        'db_table': 'annotations_theobertaudit',
                        'ordering': ['result', 'id'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='casereviewcycle',
                    constraint=models.CheckConstraint(condition=models.Q(('reviewers_per_case__gte', 3)), name='review_cycle_three_reviewers'),
                ),
                migrations.AddConstraint(
                    model_name='casereviewcycle',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['open', 'closed'])), name='review_cycle_status_valid'),
                ),
                migrations.AddConstraint(
                    model_name='casereview',
                    constraint=models.UniqueConstraint(fields=('cycle', 'test_case', 'expert'), name='case_review_one_per_expert'),
                ),
                migrations.AddConstraint(
                    model_name='casereview',
                    constraint=models.CheckConstraint(condition=models.Q(('clarity__isnull', True), ('clarity__lte', 3), _connector='OR'), name='case_review_clarity_0_3'),
                ),
                migrations.AddConstraint(
                    model_name='casereview',
                    constraint=models.CheckConstraint(condition=models.Q(('submitted_at__isnull', True), models.Q(models.Q(('valid', ''), _negated=True), models.Q(('reference_correct', ''), _negated=True), models.Q(('difficulty', ''), _negated=True), ('clarity__isnull', False)), _connector='OR'), name='case_review_submitted_complete'),
                ),
                migrations.AddConstraint(
                    model_name='caseflag',
                    constraint=models.UniqueConstraint(fields=('cycle', 'test_case'), name='case_flag_one_per_cycle_case'),
                ),
                migrations.AddConstraint(
                    model_name='caseflag',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['open', 'revised', 'retired', 'kept'])), name='case_flag_status_valid'),
                ),
                migrations.AddConstraint(
                    model_name='theobertaudit',
                    constraint=models.UniqueConstraint(fields=('result', 'expert'), name='theobert_audit_one_per_expert'),
                ),
                migrations.AddConstraint(
                    model_name='theobertaudit',
                    constraint=models.CheckConstraint(condition=models.Q(('submitted_at__isnull', True), models.Q(models.Q(('case_sound', ''), _negated=True), models.Q(('verdict_right', ''), _negated=True)), _connector='OR'), name='theobert_audit_submitted_complete'),
                ),
            ],
            database_operations=[],
        ),
    ]
