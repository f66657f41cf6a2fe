"""The inspector's records (spec §2.7, §8 R-04…R-09, R-14, R-16; issue 15): a session's minutes (acta), a
game's record (the recall and more), and the statistics per room and game type, day or month.

Read-only: what the pages, the PDFs and the CSV show, as plain data (Decimals, aware datetimes, strings),
from the models and the audit chain. Nothing here writes. Traditional bingo is read from its models; the
other wings through the read model each offers (plain values, never their models): the network's
interconnected and simultaneous games among a room's games (``NETWORK_SECTIONS``), the electronic and
automatic games (``bingo.electronic.services.readmodels.games_finished``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.cards import CardGrid
from bingo.claims import Refusal
from bingo.electronic.models import EGameState, ElectronicGame
from bingo.electronic.services import readmodels as electronic_reads
from bingo.electronic.services import screen_acks as electronic_acks
from bingo.network.interconnected.services import readmodels as interconnected_reads
from bingo.network.simultaneous.services import readmodels as simultaneous_reads
from bingo.traditional import labels
from bingo.traditional.hooks import WonPrize
from bingo.traditional.models import (
    Award,
    Ball,
    BallCorrection,
    BallSetEvent,
    BallSetEventKind,
    Claim,
    DeviceSwitch,
    DrawDeviceKind,
    DrawSource,
    Game,
    GameState,
    PrizeResult,
    ProgramAward,
    SaleKind,
    SaleOperation,
)
from bingo.traditional.services import screen_acks
from bingo.traditional.services.readmodels import ball_set_event_view, game_recall, switch_view
from halls import money
from halls.cashier.models import PayableState
from halls.cashier.services.reports import day_bounds
from halls.errors import InvalidInput
from halls.eventtypes import EventType
from halls.models import AuditEntry, CheckName, GameSession, SessionCheck, Venue

ZERO = money.ZERO
MAX_STAT_DAYS = 93
MAX_STAT_MONTHS = 24

# What the minutes' log calls each audited step (the action's code when it is not listed here).
ACTIONS = {
    EventType.SESSION_OPENED.value: gettext_lazy("Session opened after the checks and the inspection draw"),
    EventType.SESSION_CLOSED.value: gettext_lazy("Session closed"),
    EventType.GAME_CREATED.value: gettext_lazy("Game created"),
    EventType.GAME_SALES_OPENED.value: gettext_lazy("Sales opened"),
    EventType.GAME_SALES_CLOSED.value: gettext_lazy("Sales closed, prizes fixed and announced"),
    EventType.GAME_DRAW_STARTED.value: gettext_lazy("Draw started"),
    EventType.GAME_PAUSED.value: gettext_lazy("Draw paused"),
    EventType.GAME_RESUMED.value: gettext_lazy("Draw resumed"),
    EventType.GAME_CLOSED.value: gettext_lazy("Game closed"),
    EventType.GAME_VOIDED.value: gettext_lazy("Game void"),
    EventType.SALES_SOLD.value: gettext_lazy("Cards sold"),
    EventType.SALES_RETURNED.value: gettext_lazy("Cards returned"),
    EventType.BALL_CORRECTED.value: gettext_lazy("Ball corrected"),
    EventType.CLAIM_VERIFIED.value: gettext_lazy("Claim verified against the master card"),
    EventType.PRIZE_AWARDED.value: gettext_lazy("Prize confirmed"),
    EventType.PROGRAMS_AWARDED.value: gettext_lazy("Accumulated prize awarded"),
    EventType.PROGRAMS_PICK_SET.value: gettext_lazy("Accumulated prize picked for the game"),
    EventType.GAME_DEVICE_SWITCHED.value: gettext_lazy("Drawing device switched"),
    EventType.PROGRAMS_DUE.value: gettext_lazy("Accumulated prize due in the game"),
    "game.ball_set_chosen": gettext_lazy("Ball set chosen for the game"),
    "programs.last_game_of_session": gettext_lazy("Marked as the session's last game"),
    "network.round_joined": gettext_lazy("Joined the round of the interconnected prize"),
    "simultaneous.no_more_claims": gettext_lazy("No more claims in the simultaneous game"),
    "session.check_recorded": gettext_lazy("Pre-session check recorded"),
}


@dataclass(frozen=True)
class NetworkSection:
    """A network game type a room plays as traditional games (the interconnected prize's, a simultaneous
    game's mirror): which of some games it played, and the prizes their cards won through it."""

    game_type: str  # what the statistics count those games as
    games: Callable[[Collection[int]], set[int]]
    prizes_won: Callable[[Collection[int]], list[WonPrize]]


NETWORK_SECTIONS = (
    NetworkSection("interconnected", interconnected_reads.round_games, interconnected_reads.round_prizes_won),
    NetworkSection("simultaneous", simultaneous_reads.simultaneous_games, simultaneous_reads.hall_prizes_won),
)


def action_label(action: str) -> str:
    label = ACTIONS.get(action)
    return str(label) if label is not None else action


def kind_label(kind: str) -> str:
    return str({"line": _("Line"), "bingo": _("Bingo")}.get(kind, kind))


def _missing(claim: Claim, drawn: dict[int, int]) -> list[int]:
    """The numbers a refused incomplete claim still needed at its ball (``drawn``: number → ordinal); for
    a line, those of the card's row closest to completion."""
    grid = CardGrid.from_json(claim.card.grid)
    seen = {n for n, ordinal in drawn.items() if ordinal <= claim.bound_ordinal}
    if claim.kind == "bingo":
        return sorted(grid.numbers - seen)
    rows = [sorted(row - seen) for row in grid.row_numbers]
    return min(rows, key=len)


def claim_reason(claim: Claim, *, line_won_at: int | None, drawn: dict[int, int]) -> str:
    """The claim's verification as the reader reads it (bingo.traditional.labels), from the row's codes."""
    missing = _missing(claim, drawn) if claim.refusal == Refusal.NOT_COMPLETE else []
    return labels.claim_reason(
        kind=claim.kind,
        serial=claim.serial,
        valid=claim.valid,
        refusal=claim.refusal,
        bound_ordinal=claim.bound_ordinal,
        completed_at=claim.completed_at,
        winning_row=claim.winning_row,
        line_won_at=line_won_at,
        missing=missing,
    )


def _drawn(game_ids: list[int]) -> dict[int, dict[int, int]]:
    found: dict[int, dict[int, int]] = defaultdict(dict)
    for game_id, number, ordinal in Ball.objects.filter(game_id__in=game_ids).values_list(
        "game_id", "number", "ordinal"
    ):
        found[game_id][number] = ordinal
    return found


def _log(entries: Iterable[AuditEntry], numbers: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {
            "at": e.created_at,
            "actor": e.actor_label,
            "action": e.action,
            "label": action_label(e.action),
            "game": numbers.get(e.object_id) if e.object_type == "bingo.game" else None,
            "data": e.data,
        }
        for e in entries
    ]


def _game_entries(venue_id: int, game_ids: list[int]) -> Any:
    return AuditEntry.objects.filter(
        venue_id=venue_id, object_type="bingo.game", object_id__in=[str(pk) for pk in game_ids]
    )


def _prize_confirmations(game: Game) -> list[dict[str, Any]]:
    return [
        {
            "kind": r.kind,
            "kind_label": kind_label(r.kind),
            "ordinal": r.ordinal,
            "amount": r.amount,
            "winners": r.winners,
            "share": r.share,
            "remainder": r.remainder,
            "remainder_to": labels.remainder_label(r.remainder_to),
            "confirmed_by": r.confirmed_by.get_username(),
            "confirmed_at": r.confirmed_at,
            "cards": [
                f"{a.claim.series.code} #{a.claim.serial}"
                for a in r.awards.select_related("claim__series").order_by("claim__serial")
            ],
        }
        for r in PrizeResult.objects.filter(game=game).select_related("confirmed_by").order_by("pk")
    ]


def device_label(game: Game) -> str:
    """The device drawing the game (after a switch, the one it ended with), else how its balls came."""
    source = str(DrawSource(game.draw_source).label)
    device = game.draw_device
    if device is None:
        return source
    reserve = _(", reserve") if device.reserve else ""  # outside the f-string, where makemessages finds it
    return f"{device.name} ({DrawDeviceKind(device.kind).label}{reserve})"


def switch_text(switch: dict[str, Any]) -> str:
    return _("Switched from %(from)s to %(to)s after ball %(ordinal)s: %(reason)s") % {
        "from": switch["from_device"] or DrawSource(switch["from_source"]).label,
        "to": switch["to_device"],
        "ordinal": switch["at_ordinal"],
        "reason": switch["reason"],
    }


def ball_set_event_text(event: dict[str, Any]) -> str:
    kind = str(BallSetEventKind(event["kind"]).label)
    balls = ", ".join(str(b) for b in event["balls"])
    what = f"{kind} ({balls})" if balls else kind
    return f"{what}: {event['note']}"


SHOWN_HOW = {
    "live": gettext_lazy("when drawn"),
    "snapshot": gettext_lazy("only on reconnecting"),
    "never": gettext_lazy("never"),
}


def _shown_view(shown: Any) -> dict[str, Any]:
    return {
        "ordinal": shown.ordinal,
        "ball": shown.ball,
        "drawn_at": shown.drawn_at,
        "shown_at": shown.shown_at,
        "received_at": shown.received_at,
        "seq": shown.seq,
        "how": shown.how,
        "how_label": str(SHOWN_HOW[shown.how]),
        "gap": shown.gap,
        "delay": None if shown.delay is None else round(shown.delay, 2),
        "digest_ok": shown.digest_ok,
    }


DEVICE_KIND = {
    "screen": gettext_lazy("Hall screen"),
    "terminal": gettext_lazy("Player terminal"),
}


def devices_view(found: Iterable[Any]) -> list[dict[str, Any]]:
    """Issue 28: per screen (or terminal), when each ball was shown (its acknowledgement), and the gaps: the
    balls it never showed, or showed only when a snapshot brought them back after a reconnect."""
    out = []
    for record in found:
        balls = [_shown_view(b) for b in record.balls]
        live = [b for b in balls if b["how"] == "live"]
        delays = [b["delay"] for b in live if b["delay"] is not None]
        out.append(
            {
                "kind": record.kind,
                "kind_label": str(DEVICE_KIND.get(record.kind, record.kind)),
                "id": record.device,
                "name": record.name,
                "balls": balls,
                "shown_live": len(live),
                "gaps": [b for b in balls if b["gap"]],
                "max_delay": max(delays) if delays else None,
                "digest_mismatches": sum(1 for b in live if b["digest_ok"] is False),
            }
        )
    return out


def screens_record(game: Game) -> list[dict[str, Any]]:
    """Per screen of the room, when each ball was shown, and the gaps (`devices_view`)."""
    return devices_view(screen_acks.game_screens(game))


def ball_dispute(game: Game, number: int) -> list[dict[str, Any]]:
    """A claim dispute ("my screen never showed 43"), answered from the record: that ball on every screen."""
    return [
        {"screen": row["screen"], "id": row["device"], **_shown_view(row["shown"])}
        for row in screen_acks.ball_on_screens(game, number)
    ]


def electronic_record(game: ElectronicGame) -> dict[str, Any]:
    """An electronic or automatic game's record of display (issue 28): its balls, and per hall screen and
    player terminal when each was shown and the gaps."""
    game = ElectronicGame.objects.select_related("speciality__room__venue", "session").get(pk=game.pk)
    found = electronic_acks.game_devices(game)
    return {
        "id": game.pk,
        "number": game.number,
        "speciality": game.speciality.name,
        "room": game.speciality.room.name,
        "venue": game.speciality.room.venue.name,
        "time_zone": game.speciality.room.venue.time_zone,
        "state": game.state,
        "state_label": str(EGameState(game.state).label),
        "created_at": game.created_at,
        "closed_at": game.closed_at,
        "cards_sold": game.cards_sold,
        "balls": [
            {"ordinal": b.ordinal, "ball": b.ball, "drawn_at": b.drawn_at}
            for b in (found[0].balls if found else [])
        ],
        "devices": devices_view(found),
    }


def electronic_dispute(game: ElectronicGame, number: int) -> list[dict[str, Any]]:
    """A claim dispute on an electronic game: that ball on every screen and terminal."""
    return [
        {
            "screen": record.name,
            "id": record.device,
            "kind": record.kind,
            "kind_label": str(DEVICE_KIND.get(record.kind, record.kind)),
            **_shown_view(shown),
        }
        for record, shown in electronic_acks.ball_on_devices(game, number)
    ]


def game_record(game: Game) -> dict[str, Any]:
    """Everything the JSON recall has (its ball set, device, switches to the reserve and the set's
    incidents among it), plus who confirmed each prize, and each switch and incident said in words."""
    game = Game.objects.select_related("room__venue", "ball_set", "session", "draw_device").get(pk=game.pk)
    record = game_recall(game)
    drawn = _drawn([game.pk])[game.pk]
    reasons = {
        c.pk: claim_reason(c, line_won_at=game.line_won_at, drawn=drawn)
        for c in Claim.objects.filter(game=game).select_related("card")
    }
    record.update(
        {
            "time_zone": game.room.venue.time_zone,
            "device": device_label(game),
            "confirmations": _prize_confirmations(game),
            "switches": [{**s, "text": switch_text(s)} for s in record["device_switches"]],
            "claims": [
                {**c, "kind_label": kind_label(c["kind"]), "reason_label": reasons[c["id"]]}
                for c in record["claims"]
            ],
            "balls": [{**b, "colour_label": labels.colour_label(b["colour"])} for b in record["balls"]],
            "sale_operations": [
                {**s, "kind_label": str(SaleKind(s["kind"]).label)} for s in record["sale_operations"]
            ],
            "payouts": [
                {
                    **p,
                    "prize_label": p["program"] or kind_label(p["prize"]),
                    "state_label": ""
                    if p["payout"] is None
                    else str(PayableState(p["payout"]["state"]).label),
                }
                for p in record["payouts"]
            ],
            "ball_set_notes": [{**e, "text": ball_set_event_text(e)} for e in record["ball_set_events"]],
            "screens": screens_record(game),
            "claims_made": len(record["claims"]),
            "claims_refused": sum(1 for c in record["claims"] if not c["valid"]),
        }
    )
    return record


def _network_prize(kind: str, ordinal: int | None, amount: Decimal, card: str) -> dict[str, Any]:
    """A prize decided by the network's central (no one here confirmed it), as a row of the minutes."""
    return {
        "kind": kind,
        "ordinal": ordinal,
        "amount": amount,
        "winners": [card] if card else [],
        "share": amount,
        "confirmed_by": "",
        "confirmed_at": None,
    }


def session_checks(session: GameSession) -> list[dict[str, Any]]:
    """Each pre-session check of the session (R-07): the device or the inspection draw, its result, who ran
    it and when (in the order run; a check failed, then passed, shows both)."""
    return [
        {
            "check": c.check_name,
            "label": str(CheckName(c.check_name).label),
            "ok": c.ok,
            "result": str(labels.check_result(c.ok)),
            "by": c.checked_by.get_username(),
            "at": c.checked_at,
            "note": c.note,
        }
        for c in SessionCheck.objects.filter(session=session).select_related("checked_by")
    ]


def session_minutes(session: GameSession) -> dict[str, Any]:
    """The minutes (acta) of a session: its checks and inspection draw, every game with its sales, prizes
    and incidents, and who did what, when (the audit chain's entries of the session and its games, the
    balls apart: they are counted here and listed in each game's record)."""
    session = GameSession.objects.select_related("room__venue", "opened_by", "closed_by").get(pk=session.pk)
    venue = session.room.venue
    games = list(
        Game.objects.filter(session=session).select_related("ball_set", "draw_device").order_by("number")
    )
    ids = [g.pk for g in games]
    numbers = {str(g.pk): g.number for g in games}
    sales = defaultdict(list)
    for s in SaleOperation.objects.filter(game_id__in=ids).select_related("series", "cashier").order_by("pk"):
        sales[s.game_id].append(s)
    prizes = defaultdict(list)
    for p in PrizeResult.objects.filter(game_id__in=ids).select_related("confirmed_by").order_by("pk"):
        prizes[p.game_id].append(p)
    winners = defaultdict(list)
    paid: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for a in Award.objects.filter(result__game_id__in=ids).select_related("claim__series", "result"):
        winners[a.result_id].append(f"{a.claim.series.code} #{a.claim.serial}")
        paid[a.result.game_id] += a.amount
    programs = defaultdict(list)
    for pa in ProgramAward.objects.filter(game_program__game_id__in=ids).select_related(
        "game_program__program", "claim__series"
    ):
        programs[pa.game_program.game_id].append(pa)
        paid[pa.game_program.game_id] += pa.amount
    # Network games: the interconnected prize the hall's cards won, and a simultaneous game's prizes (the
    # network's Line and Bingo, the hall's Bingo), as the statistics count them.
    network_prizes: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for section in NETWORK_SECTIONS:
        for won in section.prizes_won(ids):
            network_prizes[won.game_id].append(_network_prize(won.label, won.ordinal, won.amount, won.card))
            paid[won.game_id] += won.amount
    incidents: list[dict[str, Any]] = []
    for c in BallCorrection.objects.filter(game_id__in=ids).select_related("corrected_by").order_by("pk"):
        incidents.append(
            {
                "at": c.corrected_at,
                "game": numbers[str(c.game_id)],
                "who": c.corrected_by.get_username(),
                "what": _("Ball %(ordinal)s corrected from %(old)s to %(new)s: %(reason)s")
                % {"ordinal": c.ordinal, "old": c.old_number, "new": c.new_number, "reason": c.reason},
            }
        )
    for sw in DeviceSwitch.objects.filter(game_id__in=ids).select_related(
        "from_device", "to_device", "switched_by"
    ):
        incidents.append(
            {
                "at": sw.switched_at,
                "game": numbers[str(sw.game_id)],
                "who": sw.switched_by.get_username(),
                "what": switch_text(switch_view(sw)),
            }
        )
    sets = {g.ball_set_id for g in games if g.ball_set_id is not None}
    during = Q(recorded_at__gte=session.opened_at)
    if session.closed_at is not None:
        during &= Q(recorded_at__lte=session.closed_at)
    for ev in BallSetEvent.objects.filter(
        Q(game_id__in=ids) | (Q(ball_set_id__in=sets) & during)
    ).select_related("recorded_by", "ball_set"):
        incidents.append(
            {
                "at": ev.recorded_at,
                "game": numbers.get(str(ev.game_id)),
                "who": ev.recorded_by.get_username(),
                "what": f"{ev.ball_set.name} · {ball_set_event_text(ball_set_event_view(ev))}",
            }
        )
    drawn = _drawn(ids)
    line_won = {g.pk: g.line_won_at for g in games}
    for claim in Claim.objects.filter(game_id__in=ids, valid=False).select_related(
        "series", "claimed_by", "card"
    ):
        incidents.append(
            {
                "at": claim.created_at,
                "game": numbers[str(claim.game_id)],
                "who": claim.claimed_by.get_username(),
                "what": _("%(kind)s claim of card %(card)s refused: %(reason)s")
                % {
                    "kind": kind_label(claim.kind),
                    "card": f"{claim.series.code} #{claim.serial}",
                    "reason": claim_reason(
                        claim, line_won_at=line_won[claim.game_id], drawn=drawn[claim.game_id]
                    ),
                },
            }
        )
    entries = (
        AuditEntry.objects.filter(venue_id=venue.pk)
        .filter(
            Q(object_type="halls.gamesession", object_id=str(session.pk))
            | Q(object_type="bingo.game", object_id__in=list(numbers))
        )
        .exclude(action=EventType.BALL_DRAWN.value)
        .order_by("pk")
    )
    log = _log(entries, numbers)
    rows = []
    for g in games:
        if g.state == GameState.VOID:
            incidents.append(
                {
                    "at": g.closed_at or g.last_ball_at or g.created_at,
                    "game": g.number,
                    "who": "",
                    "what": _("Game void: %(reason)s") % {"reason": g.void_reason},
                }
            )
        game_prizes = [
            {
                "kind": kind_label(p.kind),
                "ordinal": p.ordinal,
                "amount": p.amount,
                "winners": winners.get(p.pk, []),
                "share": p.share,
                "confirmed_by": p.confirmed_by.get_username(),
                "confirmed_at": p.confirmed_at,
            }
            for p in prizes[g.pk]
        ]
        game_prizes += [
            {
                "kind": pa.game_program.program.name,
                "ordinal": pa.game_program.bingo_ordinal,
                "amount": pa.amount,
                "winners": [f"{pa.claim.series.code} #{pa.claim.serial}"],
                "share": pa.amount,
                "confirmed_by": "",
                "confirmed_at": None,
            }
            for pa in programs[g.pk]
        ]
        game_prizes += network_prizes[g.pk]
        rows.append(
            {
                "id": g.pk,
                "number": g.number,
                "state": g.state,
                "state_label": GameState(g.state).label,
                "device": device_label(g),
                "ball_set": g.ball_set.name if g.ball_set else "",
                "created_at": g.created_at,
                "sales_closed_at": g.sales_closed_at,
                "draw_started_at": g.draw_started_at,
                "closed_at": g.closed_at,
                "cards_sold": g.cards_sold,
                "sales_total": g.sales_total,
                "line_prize": g.line_prize,
                "bingo_prize": g.bingo_prize,
                "balls_drawn": g.balls_drawn,
                "formula": (g.announcement or {}).get("formula", ""),
                "sales": [
                    {
                        "kind": s.kind,
                        "kind_label": str(SaleKind(s.kind).label),
                        "series": s.series.code,
                        "first": s.first_serial,
                        "last": s.last_serial,
                        "cards": s.cards,
                        "amount": s.amount,
                        "cashier": s.cashier.get_username(),
                        "at": s.created_at,
                    }
                    for s in sales[g.pk]
                ],
                "prizes": game_prizes,
                "paid": paid[g.pk],
                "void_reason": g.void_reason,
            }
        )
    incidents.sort(key=lambda i: i["at"])
    played = [r for r in rows if r["state"] == GameState.CLOSED]
    return {
        "session": session,
        "venue": venue,
        "room": session.room,
        "time_zone": venue.time_zone,
        "checks": session_checks(session),
        "inspection_balls": list(session.inspection_balls),
        "games": rows,
        "incidents": incidents,
        "log": log,
        "totals": {
            "games": len(rows),
            "played": len(played),
            "void": sum(1 for r in rows if r["state"] == GameState.VOID),
            "cards_sold": sum(r["cards_sold"] for r in played),
            "sales_total": sum((r["sales_total"] for r in played), ZERO),
            "paid": sum((r["paid"] for r in played), ZERO),
        },
    }


# --- statistics ------------------------------------------------------------------------------------------

GAME_TYPES = {
    "traditional": gettext_lazy("Traditional bingo"),
    "interconnected": gettext_lazy("Interconnected bingo"),
    "simultaneous": gettext_lazy("Simultaneous bingo"),
    "electronic": gettext_lazy("Electronic bingo"),
    "automatic": gettext_lazy("Automatic bingo"),
}


@dataclass
class StatRow:
    """One period (a venue-local day, or a month's first day), one room, one game type."""

    period: date | None
    room: str
    game_type: str
    games: int = 0
    void: int = 0
    cards: int = 0
    amount: Decimal = ZERO
    prizes: Decimal = ZERO

    @property
    def game_type_label(self) -> str:
        return str(GAME_TYPES.get(self.game_type, self.game_type))

    @property
    def return_percent(self) -> Decimal | None:
        """Prizes paid per 100 played (the return to players), to two places; None when nothing played."""
        return money.return_percent(self.prizes, self.amount)

    def add(self, other: StatRow) -> None:
        self.games += other.games
        self.void += other.void
        self.cards += other.cards
        self.amount += other.amount
        self.prizes += other.prizes


@dataclass
class Statistics:
    venue: Venue
    period: str  # "day" or "month"
    first: date
    last: date
    rows: list[StatRow] = field(default_factory=list)
    total: StatRow = field(default_factory=lambda: StatRow(None, "", ""))


def _month(day: date) -> date:
    return day.replace(day=1)


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def period_range(period: str, first: date, last: date) -> tuple[date, date]:
    """The days a statistics request covers (a month's from its first day to its last), checked."""
    if period not in ("day", "month"):
        raise InvalidInput(_("The period is a day or a month."), code="bad_period", field="period")
    if last < first:
        raise InvalidInput(
            _("The range ends (%(last)s) before it starts (%(first)s).") % {"first": first, "last": last},
            code="bad_range",
            field="to",
        )
    if period == "month":
        first, last = _month(first), date.fromordinal(_next_month(last).toordinal() - 1)
        months = (last.year - first.year) * 12 + last.month - first.month + 1
        if months > MAX_STAT_MONTHS:
            raise InvalidInput(
                _("Monthly statistics cover at most %(months)s months.") % {"months": MAX_STAT_MONTHS},
                code="range_too_long",
                field="to",
            )
    elif (last - first).days + 1 > MAX_STAT_DAYS:
        raise InvalidInput(
            _("Daily statistics cover at most %(days)s days.") % {"days": MAX_STAT_DAYS},
            code="range_too_long",
            field="to",
        )
    return first, last


def _sums(rows: Iterable[tuple[int, Decimal | None]]) -> dict[int, Decimal]:
    found: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for key, amount in rows:
        found[key] += amount or ZERO
    return found


def statistics(*, venue: Venue, period: str, first: date, last: date) -> Statistics:
    """Games played, void games, cards sold, amounts played, prizes paid and the return to players, per
    venue-local day (or month), room and game type. A game counts on the day it finished (closed or void);
    the prizes are the Line, Bingo and accumulated prizes paid (interconnected: with the network prize
    the hall's cards won; simultaneous: the network's and the hall's prizes its cards won; electronic:
    every prize credited)."""
    first, last = period_range(period, first, last)
    zone = ZoneInfo(venue.time_zone)
    start, _end = day_bounds(venue, first)
    _start, end = day_bounds(venue, last)
    cells: dict[tuple[date, str, str], StatRow] = {}

    def cell(at: datetime, room: str, game_type: str) -> StatRow:
        day = at.astimezone(zone).date()
        key = (_month(day) if period == "month" else day, room, game_type)
        return cells.setdefault(key, StatRow(*key))

    games = list(
        Game.objects.filter(
            room__venue=venue,
            state__in=[GameState.CLOSED, GameState.VOID],
            closed_at__gte=start,
            closed_at__lt=end,
        ).select_related("room")
    )
    ids = [g.pk for g in games]
    # A hall's interconnected game: its own Line and Bingo, and the network prize its cards won (paid at
    # its cashier). A simultaneous game's local mirror: the network's and the hall's prizes its cards won.
    sections = NETWORK_SECTIONS
    played_as = [(section.game_type, section.games(ids)) for section in sections]
    prizes = _sums(Award.objects.filter(result__game_id__in=ids).values_list("result__game_id", "amount"))
    for section in sections:
        for won in section.prizes_won(ids):
            prizes[won.game_id] += won.amount
    for game_id, amount in ProgramAward.objects.filter(game_program__game_id__in=ids).values_list(
        "game_program__game_id", "amount"
    ):
        prizes[game_id] += amount or ZERO
    for g in games:
        kind = next((game_type for game_type, played in played_as if g.pk in played), "traditional")
        assert g.closed_at is not None
        row = cell(g.closed_at, g.room.name, kind)
        if g.state == GameState.VOID:
            row.void += 1
            continue
        row.games += 1
        row.cards += g.cards_sold
        row.amount += g.sales_total
        row.prizes += prizes.get(g.pk, ZERO)
    for eg in electronic_reads.games_finished(venue.pk, start, end):
        row = cell(eg.closed_at, eg.room, eg.game_type)
        if eg.void:
            row.void += 1
            continue
        row.games += 1
        row.cards += eg.cards_sold
        row.amount += eg.sales_total
        row.prizes += eg.prizes
    report = Statistics(venue=venue, period=period, first=first, last=last)
    report.rows = [cells[k] for k in sorted(cells)]
    for row in report.rows:
        report.total.add(row)
    return report


def statistics_csv_rows(report: Statistics) -> Iterable[list[str]]:
    """The statistics as spreadsheet rows: a header, one row per period, room and game type, the total."""
    yield [
        str(_("Period")),
        str(_("Room")),
        str(_("Game type")),
        str(_("Games")),
        str(_("Void games")),
        str(_("Cards sold")),
        str(_("Amount played")),
        str(_("Prizes paid")),
        str(_("Return to players (%)")),
    ]
    for row in [*report.rows, report.total]:
        period = (
            ""
            if row.period is None
            else (row.period.strftime("%Y-%m") if report.period == "month" else row.period.isoformat())
        )
        yield [
            period if row.period is not None else str(_("Total")),
            row.room,
            row.game_type_label if row.game_type else "",
            str(row.games),
            str(row.void),
            str(row.cards),
            money.text(money.cents(row.amount)),
            money.text(money.cents(row.prizes)),
            "" if row.return_percent is None else str(row.return_percent),
        ]
