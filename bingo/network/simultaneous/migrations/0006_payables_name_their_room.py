"""A simultaneous game's prize waiting at the till names its room and game first, like every bingo prize:
"Partida simultánea S-12 · Línea en red · cartón A-0007" (before) reads "Sala 2 · Partida 3 (simultánea
S-12) · Línea en red · cartón A-0007", as bingo.network.simultaneous.services.venue writes it now.

Only unpaid payables change (a paid one's receipt was printed with its words). No app code is imported:
the two languages' text forms are replicated here (English and Spanish, the catalogues' languages), and
the room and game are the winning claim's, named in the payable's source
(simultaneous:<code>:<prize>:<claim>). A description that does not read as an old one is left.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import migrations

OLD = {
    "en": re.compile(r"^Simultaneous game (?P<code>.+?) · (?P<prize>.+?) · card (?P<card>.+)$"),
    "es": re.compile(r"^Partida simultánea (?P<code>.+?) · (?P<prize>.+?) · cartón (?P<card>.+)$"),
}
NEW = {
    "en": "{room} · Game {number} (simultaneous {code}) · {prize} · card {card}",
    "es": "{room} · Partida {number} (simultánea {code}) · {prize} · cartón {card}",
}
SOURCE = re.compile(r"^simultaneous:.+:(\d+)$")
LIMIT = 200  # Payable.description's length


def name_rooms(apps: Any, schema_editor: Any) -> None:
    Payable = apps.get_model("cashier", "Payable")
    Claim = apps.get_model("bingo", "Claim")
    waiting = Payable.objects.filter(state="waiting", source__startswith="simultaneous:")
    for payable in waiting.only("pk", "source", "description").iterator():
        source = SOURCE.match(payable.source)
        if source is None:
            continue
        for language, old in OLD.items():
            found = old.match(payable.description)
            if found is None:
                continue
            claim = Claim.objects.filter(pk=int(source[1])).select_related("game__room").first()
            if claim is not None:
                game = claim.game
                described = NEW[language].format(
                    room=game.room.name, number=game.number, **found.groupdict()
                )[:LIMIT]
                Payable.objects.filter(pk=payable.pk).update(description=described)
            break


class Migration(migrations.Migration):
    dependencies = [
        ("bingo_simultaneous", "0005_verbose_names"),
        ("bingo", "0016_verbose_names"),
        ("cashier", "0004_verbose_names"),
    ]

    operations = [migrations.RunPython(name_rooms, migrations.RunPython.noop, elidable=True)]
