"""Generation conditions (§9.1): the standard condition is created and every existing response is assigned to it
(repetition 1). The condition column is added nullable and filled here; 0012 makes it required (a data migration
imports no project code, tests/test_migrations.py, and the required field's default is a function of the models)."""

import django.core.validators
import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


# A frozen copy of evaluations.methodology's standard condition (a test keeps the two equal).
STANDARD = {
    "name": "standard", "is_standard": True, "temperature": Decimal("0.70"), "max_tokens": 2000,
    "system_prompt": "Answer the question.", "language": "en", "route": "", "reasoning": False, "reasoning_effort": "",
    "description": "The methodology's standard condition (§9.1): temperature 0.7, reasoning off, a minimal system "
    "prompt, at most 2,000 tokens, English.",
}


def standard_create(apps, schema_editor):
    GenerationCondition = apps.get_model("evaluations", "GenerationCondition")
    ModelResponse = apps.get_model("evaluations", "ModelResponse")
    standard = GenerationCondition.objects.filter(is_standard=True).first()
    if standard is None:
        standard = GenerationCondition.objects.create(**STANDARD)
    ModelResponse.objects.filter(condition__isnull=True).update(condition=standard)


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0010_theobert_run_stored_figures'),
    ]

    operations = [
        migrations.CreateModel(
            name='GenerationCondition',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text='How imports and commands name it, e.g. standard, reasoning-high, de.', max_length=64, unique=True, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9][A-Za-z0-9._:\\-]{0,63}$', "Use 1–64 characters: letters, digits, '.', '_', ':' or '-', starting with a letter or digit.")])),
                ('description', models.TextField(blank=True)),
                ('is_standard', models.BooleanField(default=False, help_text="The methodology's standard condition (§9.1); exactly one condition is standard.")),
                ('route', models.CharField(blank=True, help_text="Provider route or endpoint (e.g. an OpenRouter provider such as 'together'); empty: the endpoint's default routing.", max_length=120)),
                ('reasoning', models.BooleanField(default=False, help_text='Reasoning (thinking) mode on.')),
                ('reasoning_effort', models.CharField(blank=True, choices=[('', '—'), ('low', 'Low'), ('medium', 'Medium'), ('high', 'High')], default='', max_length=10)),
                ('temperature', models.DecimalField(decimal_places=2, default=Decimal('0.70'), max_digits=4, validators=[django.core.validators.MinValueValidator(Decimal('0')), django.core.validators.MaxValueValidator(Decimal('2'))])),
                ('max_tokens', models.PositiveIntegerField(default=2000, validators=[django.core.validators.MinValueValidator(1)])),
                ('system_prompt', models.TextField(blank=True, default='Answer the question.')),
                ('language', models.CharField(default='en', help_text='BCP 47 tag of the language the question is asked in (en, de, ko…).', max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'verbose_name': 'generation condition',
                'ordering': ['-is_standard', 'name'],
            },
        ),
        migrations.AlterModelOptions(
            name='modelresponse',
            options={'ordering': ['test_case', 'model', 'run_label', 'condition', 'repetition'], 'verbose_name': 'model response'},
        ),
        migrations.RemoveConstraint(
            model_name='modelresponse',
            name='response_one_per_case_model_run',
        ),
        migrations.AddField(
            model_name='modelresponse',
            name='repetition',
            field=models.PositiveSmallIntegerField(default=1, help_text='Which of the k answers under this condition (1…k; §8.4 recommends k ≥ 4).', validators=[django.core.validators.MinValueValidator(1)]),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.UniqueConstraint(condition=models.Q(('is_standard', True)), fields=('is_standard',), name='generation_condition_one_standard'),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.CheckConstraint(condition=models.Q(('temperature__gte', 0), ('temperature__lte', 2)), name='generation_condition_temperature_0_2'),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.CheckConstraint(condition=models.Q(('max_tokens__gte', 1)), name='generation_condition_max_tokens_positive'),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.CheckConstraint(condition=models.Q(('reasoning', True), ('reasoning_effort', ''), _connector='OR'), name='generation_condition_effort_needs_reasoning'),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.CheckConstraint(condition=models.Q(('reasoning_effort__in', ['', 'low', 'medium', 'high'])), name='generation_condition_effort_valid'),
        ),
        migrations.AddConstraint(
            model_name='generationcondition',
            constraint=models.CheckConstraint(condition=models.Q(('language', ''), _negated=True), name='generation_condition_language_not_empty'),
        ),
        migrations.AddField(
            model_name='modelresponse',
            name='condition',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='responses', to='evaluations.generationcondition'),
        ),
        migrations.RunPython(standard_create, migrations.RunPython.noop),
    ]
