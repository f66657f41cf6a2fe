"""Every lock of electronic bingo, each through its rank (halls.locks)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection

from bingo.electronic.models import ElectronicGame, Speciality, Terminal
from halls.cashier.models import PlayerCard
from halls.locks import Rank, take, take_many


def lock_speciality(speciality_id: int) -> Speciality:
    """The speciality FOR UPDATE: a new version, a session opened or closed, the next game created."""
    take(Rank.SPECIALITY, speciality_id)
    return (
        Speciality.objects.select_for_update(of=("self",))
        .select_related("room", "venue")
        .get(pk=speciality_id)
    )


def lock_egame(game_id: int) -> ElectronicGame | None:
    """The game FOR UPDATE (the close of sales, every ball step), with its speciality; None if none."""
    take(Rank.EGAME, game_id)
    return (
        ElectronicGame.objects.select_for_update(of=("self",))
        .select_related("speciality", "speciality__room", "version")
        .filter(pk=game_id)
        .first()
    )


def share_egame(game_id: int) -> ElectronicGame | None:
    """The game FOR SHARE: purchases of one game do not wait for each other, and the close of sales (FOR
    UPDATE) waits for the purchases in flight, so the sold set it counts is final. SQLite has one writer."""
    take(Rank.EGAME, game_id)
    if connection.vendor == "postgresql":
        table = ElectronicGame._meta.db_table
        found = list(ElectronicGame.objects.raw(f"SELECT * FROM {table} WHERE id = %s FOR SHARE", [game_id]))  # noqa: S608
        return found[0] if found else None
    return ElectronicGame.objects.filter(pk=game_id).first()


def lock_terminal(terminal_id: int) -> Terminal:
    """The terminal FOR UPDATE: its state, its verification."""
    take(Rank.TERMINAL, terminal_id)
    return Terminal.objects.select_for_update(of=("self",)).select_related("device").get(pk=terminal_id)


def lock_terminals_by_id(terminal_ids: Iterable[int]) -> dict[int, Terminal]:
    """Terminals FOR UPDATE in id order, in one statement, with their devices (a batch of purchases takes
    its terminals at once, as `lock_terminal` takes one): id -> terminal."""
    ids = sorted(set(terminal_ids))
    if not ids:
        return {}
    take_many(Rank.TERMINAL, ids)
    rows = Terminal.objects.select_for_update(of=("self",)).select_related("device").filter(pk__in=ids)
    return {t.pk: t for t in rows.order_by("pk")}


def lock_terminals(speciality_id: int) -> list[Terminal]:
    """Every terminal of a speciality not out of service FOR UPDATE, in id order, in one statement (a
    verification checks them all)."""
    found = list(
        Terminal.objects.filter(speciality_id=speciality_id)
        .exclude(state="out_of_service")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    take_many(Rank.TERMINAL, found)
    return list(Terminal.objects.select_for_update(of=("self",)).filter(pk__in=found).order_by("pk"))


def lock_player_cards_where(**filters: Any) -> dict[int, PlayerCard]:
    """The player cards matching `filters` FOR UPDATE in id order, found and locked in one statement (a
    group of purchases names its cards by number), as halls.cashier.services.locks.lock_player_card
    takes one."""
    rows = list(
        PlayerCard.objects.select_for_update(of=("self",), no_key=True).filter(**filters).order_by("pk")
    )
    take_many(Rank.PLAYER_CARD, [card.pk for card in rows])
    return {card.pk: card for card in rows}
