"""The paper stock per range of serials: PaperStock (one row a series) becomes PaperRange (rows of ranges),
each whole-series row one range 1..N; every stock movement names its serials (those recorded so far moved
the whole series, 1..N)."""

import django.db.models.deletion
import pgtrigger
from django.db import migrations, models


def whole_series(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Rows written when a series' paper moved as one: its serials 1..N (N = strips × 6). The delivery
    reference a stock row kept goes to the note of the series' first movement (received), where a
    range's reference is kept from now on."""
    PaperRange = apps.get_model("bingo", "PaperRange")
    StockMovement = apps.get_model("bingo", "StockMovement")
    for model in (PaperRange, StockMovement):
        for row in model.objects.select_related("series").only("pk", "series__strips"):
            model.objects.filter(pk=row.pk).update(last_serial=row.series.strips * 6)
    for stock in PaperRange.objects.exclude(reference=""):
        first = StockMovement.objects.filter(series_id=stock.series_id, from_state="").order_by("pk").first()
        if first is not None and stock.reference not in first.note:
            note = f"{stock.reference} · {first.note}" if first.note else stock.reference
            StockMovement.objects.filter(pk=first.pk).update(note=note[:200])


def fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        # The movements are append-only: this one UPDATE writes the serials they always covered.
        with pgtrigger.ignore("bingo.StockMovement:append_only"):
            whole_series(apps, schema_editor)
    else:  # SQLite: halls.sqlite_triggers are dropped while migrating
        whole_series(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("bingo", "0014_paper_cards"),
    ]

    operations = [
        migrations.RenameModel(old_name="PaperStock", new_name="PaperRange"),
        migrations.AlterField(
            model_name="paperrange",
            name="series",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="paper_ranges",
                to="bingo.cardseries",
            ),
        ),
        migrations.AddField(
            model_name="paperrange",
            name="first_serial",
            field=models.PositiveIntegerField(default=1),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="paperrange",
            name="last_serial",
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="stockmovement",
            name="first_serial",
            field=models.PositiveIntegerField(default=1),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="stockmovement",
            name="last_serial",
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RemoveField(model_name="paperrange", name="reference"),
        migrations.AlterModelOptions(name="paperrange", options={"ordering": ["series", "first_serial"]}),
        migrations.AddConstraint(
            model_name="paperrange",
            constraint=models.UniqueConstraint(fields=("series", "first_serial"), name="paper_range_once"),
        ),
        migrations.AddConstraint(
            model_name="paperrange",
            constraint=models.CheckConstraint(
                condition=models.Q(("first_serial__gte", 1), ("last_serial__gte", models.F("first_serial"))),
                name="paper_range_forwards",
            ),
        ),
    ]
