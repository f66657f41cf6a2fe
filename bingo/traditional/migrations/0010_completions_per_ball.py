"""Completions: one row per ball and kind holding the cards' ids, instead of one row per card.

The rows already recorded are packed in place (grouped by game, kind and ball); going back unpacks them.
"""

from collections import defaultdict

import django.db.models.deletion
from django.db import migrations, models


def pack(apps, schema_editor):  # type: ignore[no-untyped-def]
    import numpy as np

    Completion = apps.get_model("bingo", "Completion")
    groups: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    for game_id, kind, ordinal, card_id in Completion.objects.filter(card__isnull=False).values_list(
        "game_id", "kind", "ordinal", "card_id"
    ):
        groups[(game_id, kind, ordinal)].append(card_id)
    Completion.objects.filter(card__isnull=False).delete()
    Completion.objects.bulk_create(
        (
            Completion(
                game_id=game_id,
                kind=kind,
                ordinal=ordinal,
                count=len(ids),
                cards=np.array(sorted(ids), dtype="<i8").tobytes(),
            )
            for (game_id, kind, ordinal), ids in groups.items()
        ),
        batch_size=500,
    )
    _check_now(schema_editor)


def unpack(apps, schema_editor):  # type: ignore[no-untyped-def]
    import numpy as np

    Completion = apps.get_model("bingo", "Completion")
    packed = list(Completion.objects.filter(card__isnull=True))
    Completion.objects.bulk_create(
        (
            Completion(game_id=row.game_id, kind=row.kind, ordinal=row.ordinal, card_id=int(card_id), count=1)
            for row in packed
            for card_id in np.frombuffer(bytes(row.cards), dtype="<i8")
        ),
        batch_size=2000,
    )
    Completion.objects.filter(card__isnull=True).delete()
    _check_now(schema_editor)


def _check_now(schema_editor):  # type: ignore[no-untyped-def]
    """Check the rows' deferred foreign keys now: PostgreSQL alters no table with checks still pending."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("bingo", "0009_game_void_message"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="completion", name="completion_once_per_card_and_kind"),
        migrations.AddField(
            model_name="completion",
            name="count",
            field=models.PositiveIntegerField(default=1),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="completion",
            name="cards",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="completion",
            name="card",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="bingo.card",
            ),
        ),
        migrations.RunPython(pack, unpack),
        migrations.RemoveField(model_name="completion", name="card"),
        migrations.AddConstraint(
            model_name="completion",
            constraint=models.UniqueConstraint(
                fields=("game", "kind", "ordinal"), name="completion_once_per_ball_and_kind"
            ),
        ),
    ]
