# A message claiming an installation the node does not know raises an alarm of its own (issue 29).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("regulator", "0001_feed_registry"),
    ]

    operations = [
        migrations.AlterField(
            model_name="alarm",
            name="kind",
            field=models.CharField(
                choices=[
                    ("silent", "Installation silent past its window"),
                    ("gap", "Sequence gap"),
                    ("bad_signature", "Bad signature"),
                    ("replayed", "Replayed message"),
                    ("schema", "Message outside its schema"),
                    ("no_commitment", "Game without its commitment"),
                    ("prize_above_pool", "Prize paid above its pool's amount"),
                    ("anchor", "Anchors that do not verify"),
                    ("unknown", "Message from an unknown installation"),
                ],
                max_length=20,
                verbose_name="kind",
            ),
        ),
    ]
