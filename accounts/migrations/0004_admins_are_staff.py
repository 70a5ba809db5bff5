"""The Admin role and superusers carry the staff flag (one definition of an admin: access.policy)."""
from django.db import migrations
from django.db.models import Q


def forwards(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    User.objects.filter(Q(role="admin") | Q(is_superuser=True), is_staff=False).update(is_staff=True)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_api_token")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
