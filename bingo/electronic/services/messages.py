"""A terminal's messages (EB-05.f): `hello` (its software version and clock), a player card inserted (its
balance and its cards in play), `cashout` (the card's balance onto a ticket), and the reads a terminal page
draws itself from (`snapshot`, `games`). A terminal never decides a prize: it shows what the server decided.

A message that writes carries the terminal's own sequence number: the first answer is kept (TerminalMessage,
unique per terminal and seq), a retry answers it again and writes nothing, the same seq with another body is
refused `seq_reused`. The terminal is locked (Rank.TERMINAL) while a message is decided, so two copies of one
message sent at once are answered one after the other. Results are JSON (money as decimal strings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Prefetch, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic.models import (
    EBall,
    EGameState,
    ElectronicGame,
    EPrize,
    EWin,
    Purchase,
    Terminal,
    TerminalMessage,
    TerminalSoftware,
)
from bingo.electronic.services import readmodels, recall
from bingo.electronic.services.locks import lock_terminal
from bingo.electronic.services.readmodels import playable
from bingo.electronic.services.sales import Bought
from bingo.electronic.services.sales import cells_of as card_cells
from bingo.electronic.services.terminal_views import card_view
from halls import money
from halls.cashier.models import PlayerCard, PlaySession
from halls.cashier.services import admitted, limits, player_cards, tickets
from halls.errors import Conflict, InvalidInput, NotFound
from halls.services import audit

MAX_SEQ = 2**63 - 1
HELLO = "hello"
CASHOUT = "cashout"
LAST_GAMES = 5
MAX_GAMES = 50


@dataclass(frozen=True)
class Answer:
    result: dict[str, Any]
    replayed: bool  # a retry: the first answer, nothing written


def _seq(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        raise InvalidInput(_("seq is a whole number from 0."), code="bad_seq", field="seq")
    return value


def _seq_reused(seq: int) -> Conflict:
    return Conflict(
        _("Message %(seq)s of this terminal was another message.") % {"seq": seq}, code="seq_reused", seq=seq
    )


def _once(
    terminal: Terminal,
    seq: int,
    kind: str,
    body: dict[str, Any],
    decide: Callable[[Terminal], dict[str, Any]],
) -> Answer:
    """Answer message `seq` once: the kept answer for a retry, else `decide` and keep its answer."""
    with transaction.atomic():
        locked = lock_terminal(terminal.pk)
        previous = TerminalMessage.objects.filter(terminal=locked, seq=seq).first()
        if previous is not None:
            if previous.kind != kind or previous.body != body:
                raise _seq_reused(seq)
            return Answer(previous.result, replayed=True)
        result = decide(locked)
        TerminalMessage.objects.create(
            terminal=locked, seq=seq, kind=kind, body=body, result=result, received_at=timezone.now()
        )
        return Answer(result, replayed=False)


def _refusal(terminal: Terminal) -> str | None:
    """Why the terminal cannot play now (a code), or None."""
    try:
        playable(terminal)
    except Conflict as exc:
        return exc.code
    return None


# --- hello --------------------------------------------------------------------------------------------


def hello(*, terminal: Terminal, seq: Any, software_version: Any, clock: datetime) -> Answer:
    """The terminal says it is alive, which software it runs and what its clock reads: last seen now, its
    clock's offset from the server's (ms, terminal minus server). A new software version is audited (the
    verification compares it with the approved ones)."""
    seq = _seq(seq)
    version = str(software_version or "").strip()
    if not version or len(version) > 40:
        raise InvalidInput(
            _("software_version is 1 to 40 characters."),
            code="bad_software_version",
            field="software_version",
        )
    if timezone.is_naive(clock):
        raise InvalidInput(_("clock needs its time zone (ISO 8601)."), code="bad_clock", field="clock")
    body = {"software_version": version, "clock": clock.isoformat()}

    def decide(locked: Terminal) -> dict[str, Any]:
        now = timezone.now()
        offset = round((clock - now).total_seconds() * 1000)
        before = locked.software_version
        Terminal.objects.filter(pk=locked.pk).update(
            software_version=version, last_seen_at=now, clock_offset_ms=offset
        )
        locked.software_version, locked.last_seen_at, locked.clock_offset_ms = version, now, offset
        if before != version:
            audit.record(
                venue_id=locked.device.venue_id,
                actor=locked.device.name,
                action="electronic.terminal_software",
                obj=locked,
                data={"from": before, "to": version},
            )
        approved = TerminalSoftware.objects.filter(
            venue_id=locked.device.venue_id, version=version, withdrawn_at__isnull=True
        ).exists()
        return {
            "seq": seq,
            "terminal": locked.pk,
            "server_time": now.isoformat(),
            "clock_offset_ms": offset,
            "software_approved": approved,
            "state": locked.state,
            "refusal": _refusal(locked),
        }

    return _once(terminal, seq, HELLO, body, decide)


# --- the player card ------------------------------------------------------------------------------------


def _card(terminal: Terminal, card_number: Any) -> PlayerCard:
    """The inserted card of the terminal's venue (404 unknown_card otherwise), usable (409 card_blocked)."""
    card = player_cards.find_card(venue_id=terminal.device.venue_id, code=str(card_number or ""))
    player_cards.check_active(card)
    return card


def insert_card(*, terminal: Terminal, card_number: Any) -> dict[str, Any]:
    """A player card inserted: its balance and its cards in the selling and drawing games, and its play
    session here (begun now, or going on) with its reality checks. Refused 409 player_not_admitted where the
    venue's cards need their player admitted today and it was not (the reads of a card already in, its
    snapshot, games and recall, are not: a balance is always shown)."""
    card = _card(terminal, card_number)
    admitted.check_card(card)
    with transaction.atomic():
        locked = lock_terminal(terminal.pk)
        session = limits.begin_session(device=locked.device, card=card)
    return {**card_view(card, terminal), "reality": reality_answer(limits.reality_of(session))}


def take_out_card(*, terminal: Terminal, card_number: Any) -> dict[str, Any]:
    """The player card taken out: its play session here ends (again: nothing to end)."""
    card = player_cards.find_card(venue_id=terminal.device.venue_id, code=str(card_number or ""))
    with transaction.atomic():
        locked = lock_terminal(terminal.pk)
        ended = limits.end_session(device=locked.device, card=card)
    return {"card": card.number, "ended": ended}


def reality_answer(shown: limits.Reality) -> dict[str, Any]:
    """What a terminal is told of its card's play session: the reality check due (its number, or null),
    every how long one comes, when the next does, and what it shows."""
    return {
        "session": shown.session.pk,
        "started_at": shown.session.started_at.isoformat(),
        "due": shown.due,
        "acknowledged": shown.session.acknowledged,
        "every_seconds": int(shown.every.total_seconds()),
        "next_at": shown.next_at.isoformat(),
        "played_seconds": shown.played_seconds,
        "staked": money.text_cents(shown.staked),
        "won": money.text_cents(shown.won),
        "net": money.text_cents(shown.net),
    }


def _session_of(terminal: Terminal, card: PlayerCard) -> PlaySession:
    session = limits.open_session(card)
    if session is None or session.device_id != terminal.device_id:
        raise Conflict(
            _("This card has no play session at this terminal: insert it again."), code="no_play_session"
        )
    return session


def _limit_row(view: limits.LimitView) -> dict[str, Any]:
    return {
        "kind": view.kind,
        "period": view.period,
        "name": limits.limit_name(view.kind, view.period),
        "amount": money.text_cents(view.amount),
        "pending": view.pending,
        "pending_amount": money.text_cents(view.pending_amount),
        "pending_from": view.pending_from.isoformat() if view.pending_from else None,
        "used": money.text_cents(view.used),
        "left": money.text_cents(view.left),
        "resets_at": view.resets_at.isoformat(),
    }


def card_limits(*, terminal: Terminal, card_number: Any) -> dict[str, Any]:
    """The inserted card's loss and spend limits (its player's), for the player at the terminal."""
    card = _card(terminal, card_number)
    _session_of(terminal, card)
    return {"card": card.number, "limits": [_limit_row(v) for v in limits.limits_of(card)]}


def set_card_limit(
    *, terminal: Terminal, card_number: Any, kind: Any, period: Any, amount: Any
) -> tuple[dict[str, Any], bool]:
    """The player at the terminal sets one of the inserted card's limits (limits.set_limit: lowered at once,
    raised after the cooling-off); True when the change waits its cooling-off."""
    card = _card(terminal, card_number)
    _session_of(terminal, card)
    change = limits.set_limit(card=card, kind=kind, period=period, amount=amount, actor=terminal.device.name)
    waiting = change.limit.pending and change.outcome != "at_once"
    body = {
        "card": card.number,
        "outcome": change.outcome.value,
        "limit": _limit_row(change.limit),
        "limits": [_limit_row(v) for v in change.limits],
    }
    return body, waiting


def reality(*, terminal: Terminal, card_number: Any) -> dict[str, Any]:
    """The inserted card's reality check as it stands: time played and money since its session began."""
    card = _card(terminal, card_number)
    return reality_answer(limits.reality_of(_session_of(terminal, card)))


def acknowledge_reality(*, terminal: Terminal, card_number: Any, check: Any) -> Answer:
    """The player acknowledged reality check `check` on the screen: recorded and audited once (a retry
    answers the same, nothing written); the session's state after it."""
    card = _card(terminal, card_number)
    done, replayed = limits.acknowledge(device=terminal.device, card=card, number=check)
    result = {
        "check": done.number,
        "acknowledged_at": done.acknowledged_at.isoformat(),
        **reality_answer(limits.reality_of(_session_of(terminal, card))),
    }
    return Answer(result, replayed)


def purchase_answer(bought: Bought) -> dict[str, Any]:
    """What a terminal is told of a purchase (the same for its retry)."""
    purchase = bought.purchase
    return {
        "purchase": purchase.pk,
        "game": purchase.game_id,
        "key": purchase.key,
        "card": purchase.player_card.number,
        "cards": [{"card": c.pk, "position": c.position, "cells": card_cells(c)} for c in bought.cards],
        "amount": money.text(purchase.amount),
        "balance": money.text(bought.balance),
        "replayed": bought.replayed,
    }


# --- cash-out -------------------------------------------------------------------------------------------


def cashout(*, terminal: Terminal, seq: Any, card_number: Any, amount: Any = None) -> Answer:
    """The inserted card's balance (all of it, or `amount`) onto a ticket the terminal prints
    (halls.cashier.services.tickets.cash_out_to_ticket with the terminal's device). Once per seq."""
    seq = _seq(seq)
    if amount is not None:
        amount = tickets.checked_amount(amount)
    number = player_cards.number_of(str(card_number or ""))
    body = {"card": number, "amount": money.text(amount) if amount is not None else "all"}

    def decide(locked: Terminal) -> dict[str, Any]:
        issued = tickets.cash_out_to_ticket(device=locked.device, card_number=number, seq=seq, amount=amount)
        ticket = issued.ticket
        return {
            "seq": seq,
            "card": number,
            "ticket": ticket.number,
            "amount": money.text(ticket.amount),
            "expires_at": ticket.expires_at.isoformat(),
            "balance": money.text(tickets.card_balance(locked.device.venue_id, number)),
        }

    return _once(terminal, seq, CASHOUT, body, decide)


# --- what the terminal page draws -----------------------------------------------------------------------


def _prize_row(prize: EPrize) -> dict[str, Any]:
    return {
        "code": prize.code,
        "name": prize.name,
        "type": prize.type,
        "ordinal": prize.ordinal,
        "won": prize.won,
        "winners": prize.winners,
        "amount": money.text(prize.amount),
        "share": money.text(prize.share),
    }


def _closed_game(game: ElectronicGame) -> dict[str, Any]:
    return {
        "game": game.pk,
        "number": game.number,
        "state": game.state,
        "closed_at": game.closed_at.isoformat() if game.closed_at else None,
        "cards_sold": game.cards_sold,
        "balls": [b.number for b in game.balls.all()],
        "prizes": [_prize_row(p) for p in game.prizes.all() if p.won],
        "draw": readmodels.game_draw(game.pk),  # the commitment, the sales digest, the seed (revealed)
    }


def _with_balls_and_prizes(games: QuerySet[ElectronicGame]) -> list[ElectronicGame]:
    return list(
        games.prefetch_related(
            Prefetch("balls", queryset=EBall.objects.order_by("ordinal")),
            Prefetch("prizes", queryset=EPrize.objects.order_by("ordinal", "pk")),
        )
    )


def snapshot(*, terminal: Terminal, card_number: Any = None) -> dict[str, Any]:
    """Everything a terminal page needs to draw itself (at start, and after a gap in its streams): the
    terminal page's one read model (services.readmodels.terminal_snapshot: the rules, the selling and
    drawing games, the meters, the last games, the streams' seqs), with the inserted card (its balance and
    cards) when one is named. `terminal`: as the terminal API read it in this request (with its device and
    speciality): not read again."""
    card = _card(terminal, card_number) if card_number else None
    snap = readmodels.terminal_snapshot(terminal, card=card, fresh=True)
    session = limits.open_session(card) if card is not None else None
    if session is not None and session.device_id == terminal.device_id:
        snap["reality"] = reality_answer(limits.reality_of(session))
    else:
        snap["reality"] = None
    return snap


def games(*, terminal: Terminal, card_number: Any, limit: Any = 10) -> dict[str, Any]:
    """The last games the card played at this speciality (newest first), each with its balls, its prizes
    won, and the card's part: cards, spent, won (and each win)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_GAMES:
        raise InvalidInput(
            _("limit is a whole number from 1 to %(max)s.") % {"max": MAX_GAMES},
            code="bad_limit",
            field="limit",
        )
    card = _card(terminal, card_number)
    played = (
        Purchase.objects.filter(player_card=card, game__speciality_id=terminal.speciality_id)
        .values("game_id")
        .annotate(cards=Sum("cards"), spent=Sum("amount"))
    )
    part = {row["game_id"]: row for row in played}
    found = _with_balls_and_prizes(
        ElectronicGame.objects.filter(
            pk__in=part.keys(), state__in=(EGameState.CLOSED, EGameState.VOID)
        ).order_by("-number")[:limit]
    )
    wins: dict[int, list[dict[str, Any]]] = {}
    for win in EWin.objects.filter(prize__game__in=found, purchase__player_card=card).select_related("prize"):
        wins.setdefault(win.prize.game_id, []).append(
            {
                "code": win.prize.code,
                "name": win.prize.name,
                "card": win.card_id,
                "amount": money.text(win.amount),
            }
        )
    out = []
    for game in found:
        mine = wins.get(game.pk, [])
        out.append(
            {
                **_closed_game(game),
                "cards": int(part[game.pk]["cards"]),
                "spent": money.text(part[game.pk]["spent"]),
                "won": money.text(sum((Decimal(w["amount"]) for w in mine), money.ZERO)),
                "wins": mine,
            }
        )
    return {"card": card.number, "balance": money.text(player_cards.balance(card)), "games": out}


def game_recall(*, terminal: Terminal, card_number: Any, game: Any) -> dict[str, Any]:
    """The inserted card's part of one game of the terminal's speciality (EB-04, R-01): its cards with their
    cells, the balls, what each ball marked, its prizes and its ledger entries (`recall.terminal_recall`).
    Another speciality's game, or one the card did not play, answers 404 unknown_game."""
    card = _card(terminal, card_number)
    if isinstance(game, bool) or not isinstance(game, int):
        raise InvalidInput(_("game is a game's id."), code="bad_game", field="game")
    played = ElectronicGame.objects.filter(
        pk=game, speciality_id=terminal.speciality_id, purchases__player_card=card
    ).first()
    if played is None:
        raise NotFound(_("This card played no such game here."), code="unknown_game")
    return recall.terminal_recall(played, player_card=card)
