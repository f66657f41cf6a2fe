"""Cards gain their compact form (bingo.cards.pack_numbers), filled from the stored grids."""

from django.db import migrations, models


def fill_numbers(apps, schema_editor):  # type: ignore[no-untyped-def]
    Card = apps.get_model("bingo", "Card")
    batch = []
    for card in Card.objects.only("pk", "grid").iterator(chunk_size=2000):
        card.numbers = bytes(n for row in card.grid for n in row if n is not None)
        batch.append(card)
        if len(batch) == 2000:
            Card.objects.bulk_update(batch, ["numbers"])
            batch = []
    Card.objects.bulk_update(batch, ["numbers"])


class Migration(migrations.Migration):
    dependencies = [("bingo", "0002_prize_programs")]

    operations = [
        migrations.AddField(
            model_name="card",
            name="numbers",
            field=models.BinaryField(default=b"", max_length=15),
            preserve_default=False,
        ),
        migrations.RunPython(fill_numbers, migrations.RunPython.noop),
    ]
