"""Read models: what a hall screen shows for a room, the caller's view of a game, and the game recall; and
the reads the write services share with them (the sales totals, the unclaimed winners, a device switch and a
ball set's count as shown): a read model imports no write service, the services import these from here.

Answers stay small whatever the hall's size: the caller's view never lists the sold cards (the sales
announcement summarises them as ranges; ``sold_cards_page`` pages through them), and the lists that grow
with the cards sold (unclaimed winners, claims) are cut to their first or latest rows, with their counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Case, F, Q, Sum, Value, When
from django.urls import reverse

from bingo import claims as rules
from bingo.cards import CardGrid
from bingo.detect_index import card_ids
from bingo.draws.models import DrawCommitment
from bingo.traditional import hooks
from bingo.traditional.models import (
    Award,
    Ball,
    BallCorrection,
    BallSet,
    BallSetEvent,
    Card,
    CardSeries,
    Claim,
    ClaimKind,
    ClaimWindow,
    Completion,
    DeviceSwitch,
    Game,
    GameProgram,
    GameState,
    PrizeResult,
    ProgramAward,
    SaleKind,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services.programs.readmodels import game_programs, screen_programs
from halls import money
from halls.cashier.services import readmodels as cashier_readmodels
from halls.eventtypes import SalesTotals, Unclaimed, UnclaimedCard
from halls.models import Room
from jackpots.models import Award as PoolAward

# The states in which a card can be claimed (and so has a place on the unclaimed list).
CLAIMABLE = (GameState.DRAWING, GameState.PAUSED)
# The traditional rooms' name in bingo.draws (its registry, its public page's address).
DRAW_ROOM = "traditional"


def _balls(game: Game) -> list[dict[str, Any]]:
    colour_of = game.ball_set.colour_of if game.ball_set else (lambda _n: "")
    # A corrected ball carries the number it was first entered as (only games with a correction ask).
    first_entered = (
        dict(BallCorrection.objects.filter(game=game).order_by("-pk").values_list("ordinal", "old_number"))
        if game.balls_corrected
        else {}
    )
    return [
        {
            "ordinal": b.ordinal,
            "ball": b.number,
            "colour": colour_of(b.number),
            "drawn_at": b.drawn_at,
            "corrected_from": first_entered.get(b.ordinal),
        }
        for b in Ball.objects.filter(game=game).order_by("ordinal")
    ]


def _corrections(game: Game) -> list[dict[str, Any]]:
    """Every correction of the game's balls, in order: the ball, its old and new number, who, when, why."""
    rows = BallCorrection.objects.filter(game=game).select_related("corrected_by").order_by("pk")
    return [correction_view(c) for c in rows]


def correction_view(c: BallCorrection) -> dict[str, Any]:
    """One correction as the recall and the correction's own answer show it."""
    return {
        "ordinal": c.ordinal,
        "old": c.old_number,
        "new": c.new_number,
        "reason": c.reason,
        "corrected_by": c.corrected_by.get_username(),
        "corrected_at": c.corrected_at,
    }


def _winners(game: Game) -> list[dict[str, Any]]:
    return [
        {
            "kind": r.kind,
            "ordinal": r.ordinal,
            "amount": r.amount,
            "share": r.share,
            "remainder": r.remainder,
            "winners": [
                {"series": a.claim.series.code, "serial": a.claim.serial, "amount": a.amount}
                for a in r.awards.select_related("claim__series").order_by("claim__serial")
            ],
        }
        for r in PrizeResult.objects.filter(game=game).order_by("pk")
    ]


def sales_totals(game: Game) -> SalesTotals:
    """Cards sold so far and their value: the game's sales less its returns.

    Each operation writes (or deletes) its sold cards in its own transaction, so these sums are the sold
    cards' count and face values, read from a handful of operations rather than every sold card.
    """
    signed = Case(When(kind=SaleKind.RETURN, then=Value(-1)), default=Value(1))
    returned = Q(kind=SaleKind.RETURN)
    # Money is summed by the column's own field (exact on every database), returns apart.
    totals = SaleOperation.objects.filter(game=game).aggregate(
        cards=Sum(F("cards") * signed),
        sold=Sum("amount", filter=~returned, default=Decimal(0)),
        returned=Sum("amount", filter=returned, default=Decimal(0)),
    )
    total = money.cents(totals["sold"] - totals["returned"])
    return SalesTotals(cards_sold=totals["cards"] or 0, sales_total=total)


def ball_set_usage(ball_set: BallSet | None) -> dict[str, Any] | None:
    """The set's count against its limit, as the console, the setup page and the recall show it."""
    if ball_set is None:
        return None
    return {
        "id": ball_set.pk,
        "name": ball_set.name,
        "games_played": ball_set.games_played,
        "certified_games": ball_set.certified_games,
        "games_left": ball_set.games_left,
        "at_limit": ball_set.at_limit,
        "retired": ball_set.retired_at is not None,
        "colours": sorted(set(ball_set.colours.values())),
    }


def switch_view(switch: DeviceSwitch) -> dict[str, object]:
    """One switch as the recall and the switch's own answer show it."""
    return {
        "at_ordinal": switch.at_ordinal,
        "from_device": switch.from_device.name if switch.from_device else None,
        "to_device": switch.to_device.name,
        "to_kind": switch.to_device.kind,
        "from_source": switch.from_source,
        "to_source": switch.to_source,
        "reason": switch.reason,
        "switched_by": switch.switched_by.get_username(),
        "switched_at": switch.switched_at,
    }


def draw_page_url(game_id: int) -> str:
    """The public page of a committed game's draw (no login): its commitment, then its reveal."""
    return reverse("draw-page", kwargs={"room": DRAW_ROOM, "game_ref": str(game_id)})


def draw_view(game: Game, *, full: bool = False) -> dict[str, Any]:
    """The draw's commitment as the screens, the console and the API show it: verifiable by seed (with the
    commitment published before its sales opened and its public page) or not (a blower's game, or verifiable
    draws off). `full` (the recall): what bingo.draws holds that may be published, the seed once revealed."""
    if not game.draw_commitment:
        return {"verifiable": False, "commitment": "", "url": ""}
    view: dict[str, Any] = {
        "verifiable": True,
        "commitment": game.draw_commitment,
        "url": draw_page_url(game.pk),
    }
    if full:
        row = DrawCommitment.objects.filter(room=DRAW_ROOM, game_ref=str(game.pk)).first()
        view.update(
            {
                "sales_digest": row.sales_digest if row else "",
                "cards": row.cards if row and row.sales_digest else None,
                "seed": row.seed if row else "",  # "" until revealed after the game
                "revealed_at": row.revealed_at if row else None,
            }
        )
    return view


def game_summary(game: Game, *, public: bool = False) -> dict[str, Any]:
    """The game as staff see it; `public` (the hall screens): without the internal void reason."""
    # Fixed at the close of sales; while on sale, the running totals (as the sales.* events carry them).
    totals = sales_totals(game) if game.state == GameState.ON_SALE else None
    return {
        "id": game.pk,
        "number": game.number,
        "state": game.state,
        "state_label": GameState(game.state).label,
        "draw_source": game.draw_source,
        "cards_sold": totals["cards_sold"] if totals else game.cards_sold,
        "sales_total": totals["sales_total"] if totals else game.sales_total,
        # A simultaneous game's hall game pays no Line or Bingo of its own: the screens show the network's.
        "line_prize": _announced(game, "line_prize") if game.line_prize is None else game.line_prize,
        "bingo_prize": _announced(game, "bingo_prize") if game.bingo_prize is None else game.bingo_prize,
        "announcement": game.announcement,
        "claim_window": game.claim_window,
        "line_won_at": game.line_won_at,
        "balls": _balls(game),
        # Its own prizes, then those decided outside it (a network game's, by the central:
        # bingo.traditional.hooks).
        "prizes": _winners(game) + hooks.decided_prizes(game),
        # The accumulated prizes in play: amounts and max balls before the first ball, then the awards.
        "programs": game_programs(game),
        "void_message": game.void_message,
        "draw": draw_view(game),
        **({} if public else {"void_reason": game.void_reason, **_equipment(game)}),
    }


def _announced(game: Game, prize: str) -> Decimal | None:
    """A prize's amount as the close of sales announced it (a network game's, S6), if it did."""
    amount = (game.announcement or {}).get(prize)
    return None if amount in (None, "") else Decimal(str(amount))


def _equipment(game: Game) -> dict[str, Any]:
    """The ball set (its count against the manufacturer's limit, R-06) and the drawing device (TB-30)."""
    device = game.draw_device
    return {
        "ball_set": ball_set_usage(game.ball_set),
        "draw_device": None
        if device is None
        else {"id": device.pk, "name": device.name, "kind": device.kind},
    }


def _switches(game: Game) -> list[dict[str, Any]]:
    rows = DeviceSwitch.objects.filter(game=game).select_related("from_device", "to_device", "switched_by")
    return [switch_view(s) for s in rows.order_by("pk")]


def _ball_set_events(game: Game) -> list[dict[str, Any]]:
    """What happened to the game's ball set while the game was on: its incidents, balls replaced."""
    if game.ball_set_id is None:
        return []
    rows = BallSetEvent.objects.filter(ball_set_id=game.ball_set_id).select_related("recorded_by")
    start, end = game.created_at, game.closed_at
    rows = rows.filter(Q(game=game) | Q(recorded_at__gte=start, **({"recorded_at__lte": end} if end else {})))
    return [ball_set_event_view(e) for e in rows.order_by("pk")]


def ball_set_event_view(event: BallSetEvent) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "balls": event.balls,
        "note": event.note,
        "game": event.game_id,
        "replacement": event.replacement_id,
        "games_played": event.games_played,
        "recorded_by": event.recorded_by.get_username(),
        "recorded_at": event.recorded_at,
    }


def current_game(room: Room) -> Game | None:
    """The room's game in play, else its most recent one (so a screen keeps the result up)."""
    games = Game.objects.filter(room=room).select_related("ball_set", "room", "draw_device")
    live = games.exclude(state__in=[GameState.CLOSED, GameState.VOID]).order_by("-pk").first()
    return live or games.order_by("-pk").first()


def screen_snapshot(room: Room) -> dict[str, Any]:
    """The bingo section of a hall screen's snapshot."""
    game = current_game(room)
    return {
        "room": room.name,
        "game": game_summary(game, public=True) if game else None,
        "programs": screen_programs(room),
    }


# At most this many unclaimed winning cards of each kind in a view or an event (the caller reads them out;
# past a few dozen the count says enough), and the caller's view shows this many latest claims.
UNCLAIMED_SHOWN = 50
CLAIMS_SHOWN = 100


def unclaimed_view(game: Game, *, current: bool = False) -> dict[str, Any]:
    """The winning cards nobody has claimed: the first ``UNCLAIMED_SHOWN`` of each kind, and the counts.

    As fast as ``unclaimed``. ``ordinal`` is the ball the list is computed at. ``current``: see
    ``unclaimed``.
    """
    found = unclaimed(game, limit=UNCLAIMED_SHOWN, current=current)
    return {"ordinal": game.balls_drawn, **found}


def caller_view(game: Game) -> dict[str, Any]:
    """Everything the caller console shows: the summary, the latest claims and the unclaimed winners.

    `game` is as read for this answer (its balls are listed as its `balls_drawn` says)."""
    claims = Claim.objects.filter(game=game).select_related("series", "claimed_by", "card")
    latest = list(claims.order_by("-pk")[:CLAIMS_SHOWN])
    balls = _ball_numbers(game)
    return {
        **game_summary(game),
        "claims": [_claim(c, game, balls) for c in reversed(latest)],
        "claims_count": len(latest) if len(latest) < CLAIMS_SHOWN else claims.count(),
        "unclaimed": unclaimed_view(game, current=True),
    }


def sold_cards_page(game: Game, *, after: tuple[str, int] | None, limit: int) -> dict[str, Any]:
    """One page of the game's sold cards in (series, serial) order, from just after ``after``."""
    sold = SoldCard.objects.filter(game=game)
    rows = sold.order_by("card__series__code", "card__serial")
    if after is not None:
        code, serial = after
        rows = rows.filter(
            Q(card__series__code__gt=code) | Q(card__series__code=code, card__serial__gt=serial)
        )
    page = list(rows.values_list("card__series__code", "card__serial")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "count": sold.count(),
        "next": f"{page[-1][0]}:{page[-1][1]}" if more else None,
        "results": [{"series": code, "serial": serial} for code, serial in page],
    }


def _ball_numbers(game: Game) -> list[int]:
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))


def _claim(c: Claim, game: Game, balls: list[int]) -> dict[str, Any]:
    code, facts = claim_verdict(c, line_won_at=game.line_won_at, balls=balls)
    return {
        "id": c.pk,
        "kind": c.kind,
        "series": c.series.code,
        "serial": c.serial,
        "bound_ordinal": c.bound_ordinal,
        "valid": c.valid,
        "refusal": c.refusal,
        "reason": c.reason,  # in English (the audit's); the verdict as data: its code and facts
        "code": code,
        "facts": facts,
        "winning_row": c.winning_row,
        "completed_at": c.completed_at,
        "claimed_by": c.claimed_by.get_username(),
        "created_at": c.created_at,
    }


def game_recall(game: Game) -> dict[str, Any]:
    """The full record of a game: sales, prizes, balls in order with their times, claims and awards."""
    sales = SaleOperation.objects.filter(game=game).select_related("series", "cashier").order_by("pk")
    balls = _ball_numbers(game)
    return {
        **game_summary(game),
        "room": game.room.name,
        "venue": game.room.venue.name,
        "session": game.session_id,
        "created_at": game.created_at,
        "sales_closed_at": game.sales_closed_at,
        "draw_started_at": game.draw_started_at,
        "closed_at": game.closed_at,
        "prize_rounding_residue": game.prize_rounding_residue,
        "sale_operations": [
            {
                "kind": s.kind,
                "series": s.series.code,
                "first": s.first_serial,
                "last": s.last_serial,
                "cards": s.cards,
                "amount": s.amount,
                "cashier": s.cashier.get_username(),
                "at": s.created_at,
            }
            for s in sales
        ],
        "claims": [
            _claim(c, game, balls)
            for c in Claim.objects.filter(game=game).select_related("series", "claimed_by", "card")
        ],
        "ball_corrections": _corrections(game),
        "device_switches": _switches(game),
        "ball_set_events": _ball_set_events(game),
        "payouts": _payouts(game),
        "draw": draw_view(game, full=True),
    }


def _payouts(game: Game) -> list[dict[str, Any]]:
    """Every winner's share (Line, Bingo, each program won) and its payment at the cashier: the payable's
    state, when it was paid, by whom, how, the receipt (None: no payable, e.g. a share of 0)."""
    rows: list[tuple[str, str, Any, int, Any, str]] = []
    for a in (
        Award.objects.filter(result__game=game)
        .select_related("result", "claim__series")
        .order_by("result_id", "claim__serial")
    ):
        source = cashier_readmodels.bingo_award_source(a.pk)
        rows.append((a.result.kind, "", a.claim.series.code, a.claim.serial, a.amount, source))
    won = GameProgram.objects.filter(game=game, won=True, settlement__isnull=False)
    settlements = dict(won.values_list("pk", "settlement_id"))
    pool_awards = dict(
        PoolAward.objects.filter(settlement_id__in=settlements.values(), order=0).values_list(
            "settlement_id", "pk"
        )
    )
    for p in (
        ProgramAward.objects.filter(game_program__in=list(settlements))
        .select_related("game_program__program", "claim__series")
        .order_by("game_program_id", "claim__serial")
    ):
        award_id = pool_awards.get(settlements[p.game_program_id])
        source = "" if award_id is None else cashier_readmodels.pool_award_source(award_id, p.claim_id)
        program = p.game_program.program.code
        rows.append(("program", program, p.claim.series.code, p.claim.serial, p.amount, source))
    paid = cashier_readmodels.payouts([source for *_, source in rows if source], venue_id=game.room.venue_id)
    return [
        {
            "prize": prize,
            "program": program,
            "series": series,
            "serial": serial,
            "amount": amount,
            "payout": paid.get(source),
        }
        for prize, program, series, serial, amount, source in rows
    ]


def unclaimed(game: Game, *, limit: int | None = None, current: bool = False) -> Unclaimed:
    """Sold cards that have a line (while the Line is open) or a bingo and that nobody has claimed yet,
    and how many of each kind.

    Read from the completions recorded with each ball (bingo.traditional.services.detection): every card
    whose first
    line or bingo came by the last ball drawn, less those with a valid claim of that kind, by ball, series
    and serial; with `limit`, the first `limit` of each kind, from the first balls' rows only. The counts
    come from the rows' counts: a valid claim is of a card that completed that prize by the ball drawn
    (claims are verified against the same balls, one valid claim per card and prize), so each takes one
    card off. `current`: `game` was just read (or locked and written) for this answer, so its
    `balls_drawn` is the balls drawn and they are not counted again.

    At most three statements: the valid claims (for a `current` game, only while a claim window is
    open), the rows (their cards only where the list needs them), and the listed cards' serials.
    """
    lists: dict[str, list[UnclaimedCard]] = {"line": [], "bingo": []}
    counts = {"line": 0, "bingo": 0}
    drawn = game.balls_drawn if current else Ball.objects.filter(game=game).count()
    if not drawn or game.state not in CLAIMABLE:
        return _unclaimed(lists, counts)
    line_open = game.line_won_at is None or (
        game.claim_window == ClaimWindow.LINE and game.line_won_at == drawn
    )
    kinds = [ClaimKind.LINE.value, ClaimKind.BINGO.value] if line_open else [ClaimKind.BINGO.value]
    claimed: dict[str, set[int]] = {kind: set() for kind in kinds}
    if game.claim_window or not current:
        # A prize still open has valid claims only while its window is: a valid claim opens it (and a
        # valid Line sets line_won_at), and it stays open until the prize is paid or the game closes.
        # (A `game` read earlier may not show the window a claim opened since: then always read.)
        valid = Claim.objects.filter(game=game, valid=True, kind__in=kinds).values_list("kind", "card")
        for kind, card in valid:
            claimed[kind].add(card)
    # Cards a row must hold for the list: `limit` of them once the claimed ones are taken out.
    needed = {kind: (NO_LIMIT if limit is None else limit + len(claimed[kind])) for kind in kinds}
    candidates: dict[str, tuple[list[int], list[int]]] = {kind: ([], []) for kind in kinds}
    for kind, ordinal, count, cards in _completions(game, needed):
        counts[kind] += count
        if cards is not None and limit != 0:
            ids = [i for i in card_ids(cards).tolist() if i not in claimed[kind]]
            candidates[kind][0].extend(ids)
            candidates[kind][1].extend([ordinal] * len(ids))
    for kind in kinds:
        counts[kind] = max(0, counts[kind] - len(claimed[kind]))
    for kind, rows in _in_order(candidates, limit).items():
        lists[kind] = [{"series": code, "serial": serial, "since_ball": at} for at, code, serial in rows]
    return _unclaimed(lists, counts)


NO_LIMIT = 2**62


def _completions(game: Game, needed: dict[str, int]) -> list[tuple[str, int, int, bytes | None]]:
    """Each completion row of these kinds (kind, ordinal, count, cards) by ball, its cards only while the
    rows before it of its kind hold fewer than `needed[kind]` cards: one statement, the rest never read."""
    quote = connection.ops.quote_name
    table, count = quote(Completion._meta.db_table), quote("count")
    kinds = list(needed)
    need = "CASE kind " + " ".join("WHEN %s THEN %s" for _ in kinds) + " END"
    sql = (
        f"SELECT kind, ordinal, {count}, CASE WHEN running - {count} < {need} THEN cards END "  # noqa: S608
        f"FROM (SELECT kind, ordinal, {count}, cards, "
        f"SUM({count}) OVER (PARTITION BY kind ORDER BY ordinal) AS running "
        f"FROM {table} WHERE game_id = %s AND kind IN ({', '.join(['%s'] * len(kinds))})) AS done "
        "ORDER BY ordinal"
    )
    params: list[Any] = [value for kind in kinds for value in (kind, needed[kind])]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, game.pk, *kinds])
        return [(kind, ordinal, n, cards) for kind, ordinal, n, cards in cursor.fetchall()]


def _in_order(
    candidates: dict[str, tuple[list[int], list[int]]], limit: int | None
) -> dict[str, list[tuple[int, str, int]]]:
    """For each kind, (ordinal, series, serial) of its cards (ids completed at ordinals) by ordinal,
    series and serial; the first `limit`."""
    found: dict[str, list[tuple[int, str, int]]] = {kind: [] for kind in candidates}
    rows = [(kind, i, at) for kind, (ids, ats) in candidates.items() for i, at in zip(ids, ats, strict=True)]
    if not rows or limit == 0:
        return found
    if connection.vendor == "postgresql":
        # One statement whatever the number of cards (a late ball's bingos are thousands): array parameters.
        sql = (
            "SELECT kind, ordinal, code, serial FROM ("  # noqa: S608 (the models' tables)
            "SELECT u.kind, u.ordinal, s.code, c.serial, ROW_NUMBER() OVER "
            "(PARTITION BY u.kind ORDER BY u.ordinal, s.code, c.serial) AS rank "
            "FROM unnest(%s::text[], %s::bigint[], %s::integer[]) AS u(kind, id, ordinal) "
            f"JOIN {Card._meta.db_table} c ON c.id = u.id "
            f"JOIN {CardSeries._meta.db_table} s ON s.id = c.series_id"
            ") AS listed WHERE rank <= %s ORDER BY kind, ordinal, code, serial"
        )
        kinds, ids, ordinals = (list(column) for column in zip(*rows, strict=True))
        with connection.cursor() as cursor:
            cursor.execute(sql, [kinds, ids, ordinals, NO_LIMIT if limit is None else limit])
            for kind, ordinal, code, serial in cursor.fetchall():
                found[kind].append((ordinal, code, serial))
        return found
    # The embedded hall (SQLite): the cards in batches under its limit of parameters, ordered here.
    serials: dict[int, tuple[str, int]] = {}
    ids = sorted({i for _, i, _ in rows})
    for start in range(0, len(ids), 500):
        cards = Card.objects.filter(pk__in=ids[start : start + 500])
        serials.update(
            (pk, (code, serial)) for pk, code, serial in cards.values_list("pk", "series__code", "serial")
        )
    for kind, i, at in rows:
        found[kind].append((at, *serials[i]))
    for kind in found:
        found[kind] = sorted(found[kind])[:limit]
    return found


def _unclaimed(lists: dict[str, list[UnclaimedCard]], counts: dict[str, int]) -> Unclaimed:
    return {
        "line": lists["line"],
        "bingo": lists["bingo"],
        "line_count": counts["line"],
        "bingo_count": counts["bingo"],
    }


def unclaimed_winners(game: Game, *, limit: int | None = None) -> dict[str, list[UnclaimedCard]]:
    """The cards `unclaimed` lists (all of them without `limit`), by kind."""
    found = unclaimed(game, limit=limit)
    return {"line": found["line"], "bingo": found["bingo"]}


def claim_verdict(
    claim: Claim, *, line_won_at: int | None, balls: Sequence[int] | None = None
) -> tuple[str, rules.Facts]:
    """The code and facts of a claim's verdict. `balls`: the game's balls in order (read when not given and
    needed: only an incomplete claim's missing numbers need them)."""
    card = None
    if claim.refusal == rules.Refusal.NOT_COMPLETE:
        card = CardGrid.from_json(claim.card.grid)
        if balls is None:
            balls = list(
                Ball.objects.filter(game_id=claim.game_id, ordinal__lte=claim.bound_ordinal)
                .order_by("ordinal")
                .values_list("number", flat=True)
            )
    code, facts = rules.stored_verdict(
        kind=claim.kind,
        serial=claim.serial,
        valid=claim.valid,
        refusal=claim.refusal,
        bound_ordinal=claim.bound_ordinal,
        completed_at=claim.completed_at,
        winning_row=claim.winning_row,
        line_won_at=line_won_at,
        card=card,
        balls=balls or (),
    )
    return code.value, facts
