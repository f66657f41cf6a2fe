"""Completions recorded with each ball (bingo.traditional.services.detection); games in play get theirs from their balls."""

import django.db.models.deletion
from django.db import migrations, models


def record_games_in_play(apps, schema_editor):  # type: ignore[no-untyped-def]
    from bingo.detect_index import GameIndex

    Game = apps.get_model("bingo", "Game")
    SoldCard = apps.get_model("bingo", "SoldCard")
    Completion = apps.get_model("bingo", "Completion")
    for game in Game.objects.filter(state__in=["drawing", "paused"]):
        pairs = list(SoldCard.objects.filter(game=game).values_list("card_id", "card__numbers"))
        index = GameIndex([p[0] for p in pairs], b"".join(bytes(p[1]) for p in pairs))
        balls = list(game.balls.order_by("ordinal").values_list("number", flat=True))
        rows = [
            Completion(game=game, card_id=int(card_id), kind=kind, ordinal=done.ordinal)
            for done in index.apply_all(balls)
            for kind, ids in (("line", done.lines), ("bingo", done.bingos))
            for card_id in ids
        ]
        Completion.objects.bulk_create(rows, batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("bingo", "0004_card_generator"),
    ]

    operations = [
        migrations.CreateModel(
            name="Completion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(choices=[("line", "Line"), ("bingo", "Bingo")], max_length=5)),
                ("ordinal", models.PositiveSmallIntegerField()),
                (
                    "card",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="bingo.card",
                    ),
                ),
                (
                    "game",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="completions",
                        to="bingo.game",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("game", "kind", "card"), name="completion_once_per_card_and_kind"
                    )
                ],
            },
        ),
        migrations.RunPython(record_games_in_play, migrations.RunPython.noop),
    ]
