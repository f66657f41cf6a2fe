"""An interconnected prize waiting at the till names its room and game first, like every bingo prize:
"Premio interconexionado GB-1 · ronda 4 · partida 3 · cartón A-0007" (before) reads "Sala 2 · Partida 3 ·
Premio interconexionado GB-1 (ronda 4) · cartón A-0007", as bingo.network.interconnected.services.venue
writes it now.

Only unpaid payables change (a paid one's receipt was printed with its words). No app code is imported:
the two languages' text forms are replicated here (English and Spanish, the catalogues' languages), and
the room is the one whose game played the round in the payable's venue (RoundGame). A description that
does not read as an old one is left.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import migrations

OLD = {
    "en": re.compile(
        r"^Interconnected prize (?P<prize>.+?) · round (?P<round>\d+) · game (?P<game>\d+) · card (?P<card>.+)$"
    ),
    "es": re.compile(
        r"^Premio interconexionado (?P<prize>.+?) · ronda (?P<round>\d+) · partida (?P<game>\d+)"
        r" · cartón (?P<card>.+)$"
    ),
}
NEW = {
    "en": "{room} · Game {game} · Interconnected prize {prize} (round {round}) · card {card}",
    "es": "{room} · Partida {game} · Premio interconexionado {prize} (ronda {round}) · cartón {card}",
}
LIMIT = 200  # Payable.description's length


def name_rooms(apps: Any, schema_editor: Any) -> None:
    Payable = apps.get_model("cashier", "Payable")
    RoundGame = apps.get_model("bingo_network", "RoundGame")
    waiting = Payable.objects.filter(state="waiting", source__startswith="network.share:")
    for payable in waiting.only("pk", "venue_id", "description").iterator():
        for language, old in OLD.items():
            found = old.match(payable.description)
            if found is None:
                continue
            row = (
                RoundGame.objects.filter(
                    venue_id=payable.venue_id,
                    round__prize_code=found["prize"],
                    round__number=int(found["round"]),
                )
                .select_related("game__room")
                .first()
            )
            if row is not None:
                described = NEW[language].format(room=row.game.room.name, **found.groupdict())[:LIMIT]
                Payable.objects.filter(pk=payable.pk).update(description=described)
            break


class Migration(migrations.Migration):
    dependencies = [
        ("bingo_network", "0005_verbose_names"),
        ("bingo", "0016_verbose_names"),
        ("cashier", "0004_verbose_names"),
    ]

    operations = [migrations.RunPython(name_rooms, migrations.RunPython.noop, elidable=True)]
