"""The room's Bolsa Acumulada (OP-36): one pool per room, funded at every close of sales with its own
authorised percentage, from which the Super Prima (BA-19) and the Colour Prima (BA-20) are paid.

Its percentage is the pool level's contribution rate: a change is a recorded jackpots parameter change
(who, when, old, new, authorisation), refused while a game of the room is in play.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from bingo.traditional.models import RoomBolsa
from bingo.traditional.services.locks import lock_bolsa
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.changes import note
from bingo.traditional.services.programs.program_pools import new_pool, percent_problems, sync_rate
from bingo.traditional.services.programs.refusals import refuse_while_in_play, refused
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import BolsaChanged, BolsaOpened, EventType
from halls.models import Room
from halls.money import HUNDRED
from halls.services.locks import lock_room


def _percent(value: Any) -> Decimal:
    if isinstance(value, bool | float) or not isinstance(value, Decimal | int | str):
        raise refused([f"funding_percent must be a Decimal, an int or a decimal string, not {value!r}"])
    try:
        percent = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation:
        raise refused([f"funding_percent {value!r} is not a number"]) from None
    if not percent.is_finite() or not 0 < percent < HUNDRED:
        raise refused([f"Bolsa Acumulada: funding_percent {value} must be more than 0 and less than 100"])
    problems = percent_problems("funding_percent", percent)
    if problems:
        raise refused([f"Bolsa Acumulada: {p}" for p in problems])
    return percent


def _ref(authorisation_ref: str) -> str:
    ref = (authorisation_ref or "").strip()
    if not ref:
        raise InvalidInput(
            _("The Bolsa Acumulada's deduction is authorised: give its authorisation reference."),
            code="authorisation_required",
        )
    return ref


def open_bolsa(*, room: Room, funding_percent: Decimal, authorisation_ref: str, actor: Actor) -> RoomBolsa:
    percent = _percent(funding_percent)
    ref = _ref(authorisation_ref)
    with transaction.atomic():
        room = lock_room(room.pk)
        if RoomBolsa.objects.filter(room=room).exists():
            raise Conflict(
                _("Room %(name)s already has its Bolsa Acumulada.") % {"name": room.name}, code="bolsa_exists"
            )
        pool = new_pool(
            room=room,
            code=f"BINGO-{room.pk}-BOLSA",
            name="Bolsa Acumulada",
            percent=percent,
            authorisation_ref=ref,
            actor=actor,
        )
        at = clock.now()
        bolsa = RoomBolsa.objects.create(
            room=room, pool=pool, funding_percent=percent, authorisation_ref=ref, created_at=at, updated_at=at
        )
        opened = BolsaOpened(room=room.pk, pool=pool.pk, funding_percent=percent, authorisation_ref=ref)
        note(room, actor, EventType.PROGRAMS_BOLSA_OPENED, bolsa, opened)
    return bolsa


def change_bolsa(*, room: Room, funding_percent: Decimal, authorisation_ref: str, actor: Actor) -> RoomBolsa:
    percent = _percent(funding_percent)
    ref = _ref(authorisation_ref)
    with transaction.atomic():
        room = lock_room(room.pk)
        bolsa = lock_bolsa(room.pk)
        if bolsa is None:
            raise NotFound(_("Room %(name)s has no Bolsa Acumulada.") % {"name": room.name}, code="no_bolsa")
        refuse_while_in_play(room, gettext_noop("change the Bolsa Acumulada"))
        if bolsa.funding_percent == percent:
            raise InvalidInput(_("This is the Bolsa Acumulada's percentage already."), code="no_change")
        old = bolsa.funding_percent
        sync_rate(pool_id=bolsa.pool_id, percent=percent, authorisation_ref=ref, actor=actor)
        bolsa.funding_percent = percent
        bolsa.authorisation_ref = ref
        bolsa.updated_at = clock.now()
        bolsa.save(update_fields=["funding_percent", "authorisation_ref", "updated_at"])
        note(
            room,
            actor,
            EventType.PROGRAMS_BOLSA_CHANGED,
            bolsa,
            BolsaChanged(room=room.pk, pool=bolsa.pool_id, old=old, new=percent, authorisation_ref=ref),
        )
    return bolsa
