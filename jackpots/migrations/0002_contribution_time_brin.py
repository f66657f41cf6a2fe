"""A BRIN index on the contributions' time, for period reports (PostgreSQL only; tiny and cheap to keep).

Contributions are appended in time order, so a block-range index answers "from .. to .." without the
cost a B-tree would add to every insert on the hot path. Other databases skip it.
"""

from django.db import migrations


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS contribution_created_brin ON jackpots_contribution USING brin (created_at)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS contribution_created_brin")


class Migration(migrations.Migration):
    dependencies = [("jackpots", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
