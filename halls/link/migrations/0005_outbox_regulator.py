# The regulator's feed in the outbox (issue 29): a destination of its own, numbered per installation,
# whose installation-level messages (a heartbeat, an anchor, a central's) belong to no venue.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("halls", "0014_door_role"),
        ("link", "0004_outbox_destinations"),
    ]

    operations = [
        migrations.AlterField(
            model_name="outboxmessage",
            name="destination",
            field=models.CharField(
                choices=[
                    ("central", "the central"),
                    ("authority", "the gaming authority"),
                    ("regulator", "the regulator's node"),
                ],
                default="central",
                max_length=12,
            ),
        ),
        migrations.AlterField(
            model_name="outboxmessage",
            name="venue",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="halls.venue",
            ),
        ),
        migrations.AddIndex(
            model_name="outboxmessage",
            index=models.Index(
                condition=models.Q(("acked_at__isnull", True), ("destination", "regulator")),
                fields=["destination", "sequence"],
                name="outbox_unacked_regulator",
            ),
        ),
        migrations.AddConstraint(
            model_name="outboxmessage",
            constraint=models.UniqueConstraint(
                condition=models.Q(("destination", "regulator")),
                fields=("sequence",),
                name="outbox_regulator_sequence_once",
            ),
        ),
        migrations.AddConstraint(
            model_name="outboxmessage",
            constraint=models.CheckConstraint(
                condition=models.Q(("venue__isnull", False), ("destination", "regulator"), _connector="OR"),
                name="outbox_venue_unless_regulator",
            ),
        ),
    ]
