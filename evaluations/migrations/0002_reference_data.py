"""The five traditions and rubric v1.0, exactly as in the FaithBench methodology v1.0."""
from decimal import Decimal

from django.db import migrations

from evaluations.methodology import RUBRIC_V1, TRADITIONS


def create_reference_data(apps, schema_editor):
    Tradition = apps.get_model("evaluations", "Tradition")
    RubricVersion = apps.get_model("evaluations", "RubricVersion")
    RubricDimension = apps.get_model("evaluations", "RubricDimension")
    RubricSubDimension = apps.get_model("evaluations", "RubricSubDimension")
    for order, spec in enumerate(TRADITIONS):
        Tradition.objects.update_or_create(
            key=spec.key,
            defaults={"name": spec.name, "in_development": spec.in_development,
                      "min_panel_size": spec.min_panel_size, "order": order},
        )
    if RubricVersion.objects.filter(version="1.0").exists():
        return
    rubric = RubricVersion.objects.create(
        version="1.0", status="active", notes="FaithBench methodology v1.0, §4.4 and §15.5."
    )
    for order, spec in enumerate(RUBRIC_V1):
        dimension = RubricDimension.objects.create(
            rubric=rubric, key=spec.key, name=spec.name, weight=Decimal(spec.weight),
            description=spec.description, order=order,
        )
        for sub_order, sub in enumerate(spec.sub_dimensions):
            RubricSubDimension.objects.create(
                dimension=dimension, key=sub.key, name=sub.name, weight=Decimal(sub.weight),
                description=sub.description, order=sub_order,
            )


def remove_reference_data(apps, schema_editor):
    apps.get_model("evaluations", "RubricVersion").objects.filter(version="1.0").delete()


class Migration(migrations.Migration):
    dependencies = [("evaluations", "0001_initial")]
    operations = [migrations.RunPython(create_reference_data, remove_reference_data)]
