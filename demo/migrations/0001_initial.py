from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def copy_room_flags(apps: Any, schema_editor: Any) -> None:
    """The rooms that had ``Room.autoplay`` set (a demo database before the flag left halls)."""
    room = apps.get_model("halls", "Room")
    autoplay_room = apps.get_model("demo", "AutoplayRoom")
    for room_id in room.objects.filter(autoplay=True).values_list("pk", flat=True):
        autoplay_room.objects.get_or_create(room_id=room_id)


class Migration(migrations.Migration):
    initial = True

    dependencies = [("halls", "0004_venue_language")]
    # The flags are read before halls drops its column.
    run_before = [("halls", "0005_remove_room_autoplay")]

    operations = [
        migrations.CreateModel(
            name="AutoplayRoom",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "room",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="halls.room"
                    ),
                ),
            ],
        ),
        migrations.RunPython(copy_room_flags, migrations.RunPython.noop),
    ]
