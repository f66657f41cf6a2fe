"""The prizes waiting at the till name their room: a Line, Bingo or accumulated prize awarded before the
room was named ("Partida 1 · Bingo · cartón A-0345") reads as one awarded since ("Sala 2 · Partida 1 ·
Bingo · cartón A-0345"), so two rooms' game 1 are told apart at the till.

Only unpaid payables change (a paid one is history: its receipt was printed with its words). The text is
the one bingo.traditional.services.claims and programs.play build today, which is the old one with the
room's name in front: no app code is imported (historical models only), and the room is found through
the payable's source (bingo.award:<award> → its claim's game; pool.award:<award>/claim:<claim> → the
claim's game). A description that does not read as an old one (already named, or not a game's) is left.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import migrations

OLD = re.compile(r"^(Game|Partida) \d+ · ")
AWARD = re.compile(r"^bingo\.award:(\d+)$")
PROGRAM = re.compile(r"^pool\.award:\d+/claim:(\d+)$")
LIMIT = 200  # Payable.description's length


def name_rooms(apps: Any, schema_editor: Any) -> None:
    Payable = apps.get_model("cashier", "Payable")
    Award = apps.get_model("bingo", "Award")
    Claim = apps.get_model("bingo", "Claim")
    waiting = Payable.objects.filter(state="waiting", kind__in=["line", "bingo", "accumulated"])
    for payable in waiting.only("pk", "source", "description").iterator():
        if not OLD.match(payable.description):
            continue
        room = None
        if found := AWARD.match(payable.source):
            award = Award.objects.filter(pk=int(found[1])).select_related("claim__game__room").first()
            room = award.claim.game.room.name if award is not None else None
        elif found := PROGRAM.match(payable.source):
            claim = Claim.objects.filter(pk=int(found[1])).select_related("game__room").first()
            room = claim.game.room.name if claim is not None else None
        if room:
            described = f"{room} · {payable.description}"[:LIMIT]
            Payable.objects.filter(pk=payable.pk).update(description=described)


class Migration(migrations.Migration):
    dependencies = [
        ("bingo", "0016_verbose_names"),
        ("cashier", "0004_verbose_names"),
    ]

    operations = [migrations.RunPython(name_rooms, migrations.RunPython.noop, elidable=True)]
